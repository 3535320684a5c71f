package join

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The profiler's top frame MethodHandle.invokeBasic where ours is a linker intrinsic, the rest
// the same: the ledger's ap-mh-linker-name, counted as differ:frame:mh_linker.
func TestMHLinkerNamedInvokeBasic(t *testing.T) {
	j := &Judge{names: NewNames()}
	f := func(key string, native bool) Frame { return Frame{Method: j.names.id(key), Native: native} }
	basic := f("java/lang/invoke/MethodHandle.invokeBasic(I)I", false)
	link := f("java/lang/invoke/MethodHandle.linkToStatic(ILjava/lang/invoke/MemberName;)I", true)
	form := f("java/lang/invoke/DirectMethodHandle$Holder.invokeStatic(Ljava/lang/Object;I)I", false)
	main := f("Main.main([Ljava/lang/String;)V", false)
	other := f("Main.other()V", false)
	theirs := Walk{Frames: []Frame{basic, form, main}}
	assert.True(t, j.mhLinkerNamedInvokeBasic(theirs, Walk{Frames: []Frame{link, form, main}}))
	assert.False(t, j.mhLinkerNamedInvokeBasic(theirs, Walk{Frames: []Frame{link, form, other}}), "the rest differs")
	assert.False(t, j.mhLinkerNamedInvokeBasic(theirs, Walk{Frames: []Frame{link, form}}), "lengths differ")
	assert.False(t, j.mhLinkerNamedInvokeBasic(Walk{Frames: []Frame{form, form, main}}, Walk{Frames: []Frame{link, form, main}}), "not invokeBasic")
	link.Native = false
	assert.False(t, j.mhLinkerNamedInvokeBasic(theirs, Walk{Frames: []Frame{link, form, main}}), "ours not the intrinsic")
}
