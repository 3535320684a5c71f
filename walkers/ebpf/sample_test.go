//go:build 386 || amd64

package ebpf

import (
	"encoding/binary"
	"reflect"
	"testing"
	"unsafe"
)

// TestSampleLayout pins decodeSample to struct sample as bpf2go generated it from C.
func TestSampleLayout(t *testing.T) {
	var s samplerSample
	for _, tc := range []struct {
		field string
		off   uintptr
		want  uintptr
	}{
		{"pid", unsafe.Offsetof(s.Pid), 0},
		{"tid", unsafe.Offsetof(s.Tid), 4},
		{"time_ns", unsafe.Offsetof(s.TimeNs), 8},
		{"cpu", unsafe.Offsetof(s.Cpu), 16},
		{"err", unsafe.Offsetof(s.Err), 20},
		{"nframes", unsafe.Offsetof(s.Nframes), 24},
		{"flags", unsafe.Offsetof(s.Flags), 28},
		{"frames", unsafe.Offsetof(s.Frames), sampleHeader},
	} {
		if tc.off != tc.want {
			t.Errorf("struct sample.%s at %d, decodeSample reads it at %d", tc.field, tc.off, tc.want)
		}
	}
	if maxFrames != 2048 {
		t.Errorf("MAX_FRAMES = %d, documented as 2048", maxFrames)
	}
}

func TestDecodeSample(t *testing.T) {
	raw := make([]byte, sampleHeader+16)
	le := binary.LittleEndian
	le.PutUint32(raw[0:], 100)
	le.PutUint32(raw[4:], 101)
	le.PutUint64(raw[8:], 5e9)
	le.PutUint32(raw[16:], 1)
	le.PutUint32(raw[20:], 0)
	le.PutUint32(raw[24:], 2)
	le.PutUint32(raw[28:], sampleKernel)
	le.PutUint64(raw[32:], 0x7f00)
	le.PutUint64(raw[40:], 0x7f01)
	var s Sample
	if err := decodeSample(raw, &s); err != nil {
		t.Fatal(err)
	}
	want := Sample{Pid: 100, Tid: 101, CPU: 1, TimeNs: 5e9, InKernel: true, Frames: []uint64{0x7f00, 0x7f01}, Count: 1}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v, want %+v", s, want)
	}
	for _, bad := range [][]byte{raw[:sampleHeader-1], raw[:sampleHeader+8]} {
		if err := decodeSample(bad, &s); err == nil {
			t.Errorf("decodeSample(%d bytes) accepted a short record", len(bad))
		}
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{
		"0":         {0},
		"0-1":       {0, 1},
		"0-2,4,6-7": {0, 1, 2, 4, 6, 7},
	} {
		got, err := parseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseCPUList("0-x"); err == nil {
		t.Error("parseCPUList accepted 0-x")
	}
}
