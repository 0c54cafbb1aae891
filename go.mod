module github.com/terse-dev/terse

go 1.26
