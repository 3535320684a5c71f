package methods

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Code is a method's bytecode (the agent's B lines, from JVMTI GetBytecodes) with its
// instruction boundaries decoded once.
type Code struct {
	Bytes  []byte
	starts []uint64 // bit i: an instruction starts at bci i
	// Pool: the method names the class's constant pool entries call (the agent's P line
	// before the class's methods), by index; nil when the agent wrote none.
	Pool *Pool
}

// Pool is one class's invoke targets: constant-pool index -> the name of the method a
// Methodref or InterfaceMethodref calls, AnyTarget for MethodHandle's and VarHandle's
// signature-polymorphic methods.
type Pool struct {
	Class string // internal name
	names map[uint16]string
}

// AnyTarget is a Pool name that calls whatever a method handle is linked to.
const AnyTarget = "*"

// InvokeTarget is the name of the method the invoke at bci calls, when bci holds an
// invokevirtual, invokespecial, invokestatic or invokeinterface and the pool names it.
// invokedynamic has none: its call site is linked at run time.
func (c *Code) InvokeTarget(bci int32) (string, bool) {
	if c.Pool == nil || !c.Starts(bci) || int(bci)+3 > len(c.Bytes) {
		return "", false
	}
	switch c.Bytes[bci] {
	case opInvokeVirtual, opInvokeSpecial, opInvokeStatic, opInvokeInterface:
		name, ok := c.Pool.names[binary.BigEndian.Uint16(c.Bytes[bci+1:])]
		return name, ok
	}
	return "", false
}

// SameCalls reports whether c and d are the same bytecode calling the same methods: equal bytes
// and, at every invoke, the same target name. Two hidden classes of one name (the lambdas of
// one outer class, spelled alike once their address is dropped) have the same bytes and call
// different lambda bodies through the same pool index.
func (c *Code) SameCalls(d *Code) bool {
	if c == nil || d == nil || string(c.Bytes) != string(d.Bytes) {
		return false
	}
	for bci := int32(0); int(bci) < len(c.Bytes); bci++ {
		x, xok := c.InvokeTarget(bci)
		y, yok := d.InvokeTarget(bci)
		if xok != yok || x != y {
			return false
		}
	}
	return true
}

// parsePoolLine reads P\t<class signature>\t<index>=<name>;...
func parsePoolLine(line string) (*Pool, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 || f[0] != "P" || f[1] == "" {
		return nil, fmt.Errorf("pool line: want P, class, entries")
	}
	p := &Pool{Class: ClassName(f[1]), names: make(map[uint16]string)}
	if f[2] == "" {
		return p, nil
	}
	for _, e := range strings.Split(f[2], ";") {
		i, name, ok := strings.Cut(e, "=")
		n, err := strconv.ParseUint(i, 10, 16)
		if !ok || err != nil || n == 0 || name == "" {
			return nil, fmt.Errorf("pool line for %s: entry %q is not <index>=<name>", f[1], e)
		}
		p.names[uint16(n)] = name
	}
	return p, nil
}

// Instruction opcodes the frame-validity oracle needs by name.
const (
	opNew             = 0xbb
	opGetStatic       = 0xb2
	opPutStatic       = 0xb3
	opInvokeVirtual   = 0xb6
	opInvokeSpecial   = 0xb7
	opInvokeStatic    = 0xb8
	opInvokeInterface = 0xb9
	opInvokeDynamic   = 0xba
	opTableSwitch     = 0xaa
	opLookupSwitch    = 0xab
	opWide            = 0xc4
	opIinc            = 0x84
)

// insnLen is the length of each fixed-length opcode; 0 marks the variable-length switches,
// wide, and opcodes a class file cannot hold.
var insnLen = func() [256]uint8 {
	var t [256]uint8
	set := func(lo, hi int, n uint8) {
		for op := lo; op <= hi; op++ {
			t[op] = n
		}
	}
	set(0x00, 0x0f, 1)                                          // nop .. dconst_1
	t[0x10], t[0x11], t[0x12], t[0x13], t[0x14] = 2, 3, 2, 3, 3 // bipush sipush ldc ldc_w ldc2_w
	set(0x15, 0x19, 2)                                          // iload .. aload
	set(0x1a, 0x35, 1)                                          // iload_0 .. saload
	set(0x36, 0x3a, 2)                                          // istore .. astore
	set(0x3b, 0x83, 1)                                          // istore_0 .. lxor
	t[opIinc] = 3
	set(0x85, 0x98, 1) // conversions, compares
	set(0x99, 0xa8, 3) // if<cond>, goto, jsr
	t[0xa9] = 2        // ret
	set(0xac, 0xb1, 1) // returns
	set(0xb2, 0xb8, 3) // get/put field/static, invokevirtual/special/static
	t[opInvokeInterface], t[opInvokeDynamic] = 5, 5
	t[opNew], t[0xbc], t[0xbd] = 3, 2, 3 // new newarray anewarray
	set(0xbe, 0xbf, 1)                   // arraylength athrow
	t[0xc0], t[0xc1] = 3, 3              // checkcast instanceof
	set(0xc2, 0xc3, 1)                   // monitorenter monitorexit
	t[0xc5] = 4                          // multianewarray
	t[0xc6], t[0xc7] = 3, 3              // ifnull ifnonnull
	t[0xc8], t[0xc9] = 5, 5              // goto_w jsr_w
	return t
}()

// DecodeCode finds the instruction boundaries of a bytecode array. It fails on an opcode
// a class file cannot hold or an instruction running past the end.
func DecodeCode(b []byte) (*Code, error) {
	c := &Code{Bytes: b, starts: make([]uint64, (len(b)+63)/64)}
	for pc := 0; pc < len(b); {
		c.starts[pc/64] |= 1 << (pc % 64)
		op := b[pc]
		n := int(insnLen[op])
		switch op {
		case opTableSwitch, opLookupSwitch:
			at := pc + 1 + (4-(pc+1)%4)%4 // operands are 4-byte aligned
			if at+12 > len(b) {
				return nil, fmt.Errorf("switch at %d runs past the end", pc)
			}
			word := func(i int) int64 { return int64(int32(binary.BigEndian.Uint32(b[at+4*i:]))) }
			var body int64
			if op == opTableSwitch {
				body = 12 + (word(2)-word(1)+1)*4
			} else {
				body = 8 + word(1)*8
			}
			if body < 8 || int64(at)+body > int64(len(b)) {
				return nil, fmt.Errorf("switch at %d has a bad size", pc)
			}
			n = at - pc + int(body)
		case opWide:
			if pc+1 >= len(b) {
				return nil, fmt.Errorf("wide at %d runs past the end", pc)
			}
			n = 4
			if b[pc+1] == opIinc {
				n = 6
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("opcode %#x at %d is not a class-file opcode", op, pc)
		}
		if pc+n > len(b) {
			return nil, fmt.Errorf("opcode %#x at %d runs past the end", op, pc)
		}
		pc += n
	}
	return c, nil
}

// Starts reports whether an instruction starts at bci.
func (c *Code) Starts(bci int32) bool {
	return bci >= 0 && int(bci) < len(c.Bytes) && c.starts[bci/64]&(1<<(bci%64)) != 0
}

// Op is the opcode at bci (which must start an instruction).
func (c *Code) Op(bci int32) byte { return c.Bytes[bci] }

// IsInvoke reports whether bci holds an invoke instruction.
func (c *Code) IsInvoke(bci int32) bool {
	if !c.Starts(bci) {
		return false
	}
	switch c.Bytes[bci] {
	case opInvokeVirtual, opInvokeSpecial, opInvokeStatic, opInvokeInterface, opInvokeDynamic:
		return true
	}
	return false
}

// InitTrigger reports whether bci holds an instruction that initializes a class (and so
// can call its <clinit>): new, getstatic, putstatic, invokestatic.
func (c *Code) InitTrigger(bci int32) bool {
	if !c.Starts(bci) {
		return false
	}
	switch c.Bytes[bci] {
	case opNew, opGetStatic, opPutStatic, opInvokeStatic:
		return true
	}
	return false
}

// parseCodeLine reads B\t0x<id>\t<hex>.
func parseCodeLine(line string) (uint64, *Code, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 || f[0] != "B" {
		return 0, nil, fmt.Errorf("bytecode line: want B, id, hex")
	}
	h, ok := strings.CutPrefix(f[1], "0x")
	if !ok {
		return 0, nil, fmt.Errorf("bytecode line: id %q is not 0x hex", f[1])
	}
	id, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("bytecode line: id: %w", err)
	}
	b, err := hex.DecodeString(f[2])
	if err != nil {
		return 0, nil, fmt.Errorf("bytecode line: %w", err)
	}
	c, err := DecodeCode(b)
	if err != nil {
		return 0, nil, fmt.Errorf("bytecode line for %#x: %w", id, err)
	}
	return id, c, nil
}
