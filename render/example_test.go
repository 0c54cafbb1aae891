package render_test

import (
	"fmt"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

func ExampleEncode() {
	v, _ := tree.ParseString(`{"total":3,"items":[{"id":1,"state":"open","title":"Fix login"},{"id":2,"state":"closed","title":"Upgrade deps"},{"id":3,"state":"open","title":"Docs, again"}]}`)
	text, formats, err := render.Encode(v, nil) // auto, estimate counter, verified
	if err != nil {
		panic(err)
	}
	fmt.Println(formats)
	fmt.Println(text)
	back, _ := render.Decode(text)
	fmt.Println(tree.Equal(back, v))
	// Output:
	// [kv table]
	// total: 3
	// items[3]{id,state,title}:
	//   1,open,Fix login
	//   2,closed,Upgrade deps
	//   3,open,"Docs, again"
	// true
}
