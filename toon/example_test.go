package toon_test

import (
	"errors"
	"fmt"

	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

func ExampleMarshal() {
	v, _ := tree.ParseString(`{"users":[{"id":1,"name":"Ada","role":"admin"},{"id":2,"name":"Bob","role":"user"}],"total":2.50}`)
	fmt.Println(string(toon.Marshal(v)))
	// Output:
	// users[2]{id,name,role}:
	//   1,Ada,admin
	//   2,Bob,user
	// total: 2.5
}

func ExampleAppend_exactNumbers() {
	v, _ := tree.ParseString(`{"price":2.50,"big":1E+30}`)
	opts := &toon.EncodeOptions{Delimiter: toon.Pipe, ExactNumbers: true}
	fmt.Println(string(toon.Append(nil, v, opts)))
	// Output:
	// price: 2.50
	// big: 1E+30
}

func ExampleUnmarshal() {
	v, err := toon.Unmarshal([]byte("servers[2:]{host,port}:\n  alpha: a.example.com,8080\n  beta: b.example.com,9090"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v)
	// Output:
	// {"servers":{"alpha":{"host":"a.example.com","port":8080},"beta":{"host":"b.example.com","port":9090}}}
}

func ExampleSyntaxError() {
	_, err := toon.Unmarshal([]byte("items[3]{id,name}:\n  1,Ada\n  2,Bob"), nil)
	if se, ok := errors.AsType[*toon.SyntaxError](err); ok {
		fmt.Println(se)
		fmt.Println("at", se.Pointer)
	}
	// Output:
	// 1:7: array declares 3 rows, found 2
	// at /items
}
