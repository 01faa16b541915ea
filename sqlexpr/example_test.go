package sqlexpr_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/mvd-project/mvd/sqlexpr"
)

func Example() {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"purchase", "refund", "purchase"}, nil)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{5, 50, 20}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()

	filter, err := sqlexpr.CompileFilter("kind = 'purchase' AND amount > 10", schema)
	if err != nil {
		panic(err)
	}
	cents, err := sqlexpr.CompileSQL("amount * 100", schema)
	if err != nil {
		panic(err)
	}
	kept, err := filter.Filter(mem, rec)
	if err != nil {
		panic(err)
	}
	defer kept.Release()
	out, err := cents.EvalWith(mem, kept)
	if err != nil {
		panic(err)
	}
	defer out.Release()
	fmt.Println(cents.OutputType(), cents.Inputs(), filter.Inputs(), out)
	// Output: int32 [amount] [amount kind] [2000]
}
