package giveup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// caller()V: 0 aload_0, 1 invokevirtual, 4 new, 7 dup, 8 return.
// loop()V (0x201): 0 iconst_0, 1 istore_1, 2 iinc 1 1, 5 goto 2, 8 return.
const table = "M\t0x200\tLapp/C;\tcaller\t()V\t8\t-\nB\t0x200\t2ab60001bb000259b1\n" +
	"M\t0x201\tLapp/C;\tloop\t()V\t8\t-\nB\t0x201\t033c840101a7fffdb1\n"

func judge(t *testing.T) *Judge {
	tab := methods.New()
	require.Positive(t, tab.Parse([]byte(table)))
	// The judge's walks here are "ok" when they returned frames: the classifier is not
	// what is under test.
	class := func(r *samplelog.Record) string {
		if r.Result > 0 {
			return walkclass.OK
		}
		return walkclass.Error("x")
	}
	errName := func(r *samplelog.Record) string { return walkclass.Error(classify.ASGCTCodeName(r.Result)) }
	return New([]string{"asgct", "vmstructs", ""}, tab, class, errName)
}

func rec(w uint16, sample uint64, result int32, typ uint32, bci int32) *samplelog.Record {
	r := &samplelog.Record{Walker: w, Tid: 1, Sample: sample, Result: result}
	if result > 0 {
		r.Frames = []samplelog.Frame{{Method: 0x200, Bci: bci, Type: typ}}
	}
	return r
}

// Each error is judged by the other walk of its signal: a give-up only where the judge
// completed, the code is not one ASGCT returns on walkable stacks by design, and the thread
// was caught at an instruction inside its method's own code.
func TestJudgement(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     int32 // asgct's code
		judge   int32 // vmstructs's result
		typ     uint32
		bci     int32
		class   string
		ordered bool // the judge's walk comes first in the log
	}{
		{"ordinary interpreted top", -5, 1, 1, 7, walkclass.Giveup("unknown_Java"), false},
		{"ASGCT's top, no tier named", -5, 1, 0, 7, walkclass.Giveup("unknown_Java"), false},
		{"compiled top: body, prologue or epilogue?", -5, 1, 2, 7, walkclass.Excused("unknown_Java"), false},
		{"judge first in the log", -6, 1, 1, 7, walkclass.Giveup("not_walkable_Java"), true},
		{"at an invoke: a callee's entry or a stub", -5, 1, 1, 1, walkclass.Excused("unknown_Java"), false},
		{"at an allocation", -5, 1, 1, 4, walkclass.Excused("unknown_Java"), false},
		{"at the entry", -6, 1, 1, 0, walkclass.Excused("not_walkable_Java"), false},
		{"compiled prologue", -5, 1, 2, -1, walkclass.Excused("unknown_Java"), false},
		{"by design: in the VM", -3, 1, 1, 7, walkclass.Excused("unknown_not_Java"), false},
		{"by design: GC", -2, 1, 1, 7, walkclass.Excused("GC_active"), false},
		{"judge failed too", -5, -1, 0, 0, walkclass.Justified("unknown_Java"), false},
		{"stub above the top", -5, 1, 6, 0, walkclass.Excused("unknown_Java"), false},
		{"loop body", -5, 1, 1, 102, walkclass.Giveup("unknown_Java"), false},
		{"loop back edge: its safepoint poll", -5, 1, 1, 105, walkclass.Excused("unknown_Java"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := judge(t)
			a, b := rec(0, 1, tc.err, 0, 0), rec(1, 1, tc.judge, tc.typ, tc.bci%100)
			if tc.bci >= 100 && len(b.Frames) > 0 { // in loop()V
				b.Frames[0].Method = 0x201
			}
			if tc.typ == 6 { // a stub frame above the Java frame
				b.Frames = append([]samplelog.Frame{{Type: 6}}, samplelog.Frame{Method: 0x200, Bci: 7, Type: 2})
			}
			if tc.ordered {
				a, b = b, a
			}
			j.Add(a)
			j.Add(b)
			j.Finish()
			m := j.Counts["asgct"]
			assert.Equal(t, uint64(1), m[tc.class], "%v", m)
			assert.Equal(t, uint64(1), m[Errors])
			assert.Equal(t, uint64(1), m[Walks])
			if walkclass.IsGiveup(tc.class) {
				assert.Equal(t, uint64(1_000_000), m[PPM])
			} else {
				assert.Zero(t, m[PPM])
			}
		})
	}
}

// A signal whose other walk never came (dropped) is unjudged, at the end of the run.
func TestUnjudgedWithoutPartner(t *testing.T) {
	j := judge(t)
	j.Add(rec(0, 1, -5, 0, 0))
	j.Add(rec(0, 2, 3, 1, 7))
	j.Add(rec(1, 2, -5, 0, 0)) // vmstructs failed where asgct completed
	j.Finish()
	assert.Equal(t, uint64(1), j.Counts["asgct"][walkclass.Unjudged("unknown_Java")])
	assert.Equal(t, uint64(1), j.Counts["vmstructs"][walkclass.Giveup("unknown_Java")])
	assert.Equal(t, uint64(2), j.Counts["asgct"][Walks])
}

// Walks the run moved (register fuzzing) or stopped (injected read faults) are not judged,
// and walkers without a name (deferred, the reference) are not partners.
func TestPerturbedAndUnpairedLeftOut(t *testing.T) {
	j := judge(t)
	p := rec(0, 1, -5, 0, 0)
	p.Flags = samplelog.FlagPerturbed
	j.Add(p)
	j.Add(rec(2, 1, 3, 2, 7))
	j.Finish()
	assert.Empty(t, j.Counts)
	assert.Nil(t, New([]string{"asgct", ""}, nil, nil, nil))
}
