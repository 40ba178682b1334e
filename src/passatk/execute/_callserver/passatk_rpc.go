// passatk's call channel for Go: a call server for the sample, a proxy for the judge.
//
// passatk.execute.judged writes this file, after a package clause, beside the program, and both
// programs are built from the entry point's declared type by reflection. Values: an integer is a
// JSON integer (range-checked), a float ["f", "<shortest round-trip text>"], a string a JSON string
// of bytes (every byte outside printable ASCII as \u00XX), a slice or array ["l", ...] (a nil slice
// null), a map ["d", ["t", key, value], ...] (a nil map null), an interface{} ["a", "<type>", value]
// (a nil one null; a type the channel does not carry ["x", "<type>"], equal to nothing).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const (
	passatkLineLimit  = 16 << 20
	passatkDepthLimit = 200
	passatkBroken     = 3 // the judge's exit status when the sample's process ended or broke the protocol
)

type passatkBad struct{ why string }

// passatkOpaque is a value of a type the channel does not carry: equal to nothing the tests expect.
type passatkOpaque struct{ name string }

func (o passatkOpaque) String() string { return "passatk: a value of type " + o.name + " the channel does not carry" }

func passatkFail(format string, args ...interface{}) { panic(passatkBad{fmt.Sprintf(format, args...)}) }

func passatkReadLine(in *bufio.Reader) ([]byte, string) {
	var line []byte
	for {
		chunk, err := in.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > passatkLineLimit {
			return nil, "an answer longer than 16 MiB"
		}
		if err == nil {
			return line[:len(line)-1], ""
		}
		if err != bufio.ErrBufferFull {
			return nil, "the sample's process ended"
		}
	}
}

func passatkParse(line []byte) interface{} {
	text := string(line)
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var tree interface{}
	if err := dec.Decode(&tree); err != nil {
		passatkFail("not JSON: %v", err)
	}
	if strings.TrimSpace(text[dec.InputOffset():]) != "" {
		passatkFail("text after the value")
	}
	return tree
}

func passatkQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(b, "\\u%04x", c)
		}
	}
	b.WriteByte('"')
}

func passatkTagged(tree interface{}, tag string) []interface{} {
	items, ok := tree.([]interface{})
	if !ok || len(items) == 0 || items[0] != tag {
		passatkFail("expected [%q, ...]", tag)
	}
	return items[1:]
}

// passatkCarried says whether a value of type t crosses the channel as itself (else it is opaque).
func passatkCarried(t reflect.Type) bool {
	if t.PkgPath() != "" { // a named type of a package's own
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
		return true
	case reflect.Slice, reflect.Array:
		return passatkCarried(t.Elem())
	case reflect.Map:
		return passatkCarried(t.Key()) && passatkCarried(t.Elem())
	case reflect.Interface:
		return t.NumMethod() == 0
	}
	return false
}

func passatkEncode(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(`["f",`)
		passatkQuote(b, strconv.FormatFloat(v.Float(), 'g', -1, v.Type().Bits()))
		b.WriteByte(']')
	case reflect.String:
		passatkQuote(b, v.String())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return
		}
		b.WriteString(`["l"`)
		for i := 0; i < v.Len(); i++ {
			b.WriteByte(',')
			passatkEncode(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		b.WriteString(`["d"`)
		it := v.MapRange()
		for it.Next() {
			b.WriteString(`,["t",`)
			passatkEncode(b, it.Key())
			b.WriteByte(',')
			passatkEncode(b, it.Value())
			b.WriteByte(']')
		}
		b.WriteByte(']')
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		inner := v.Elem()
		if !passatkCarried(inner.Type()) {
			b.WriteString(`["x",`)
			passatkQuote(b, inner.Type().String())
			b.WriteByte(']')
			return
		}
		b.WriteString(`["a",`)
		passatkQuote(b, inner.Type().String())
		b.WriteByte(',')
		passatkEncode(b, inner)
		b.WriteByte(']')
	default:
		passatkFail("a value of type %s", v.Type())
	}
}

// passatkType is the type a type's text names ("int", "[]interface {}", "map[string][2]int"), or nil.
func passatkType(name string) reflect.Type {
	basic := map[string]reflect.Type{
		"bool": reflect.TypeOf(false), "int": reflect.TypeOf(0), "int8": reflect.TypeOf(int8(0)),
		"int16": reflect.TypeOf(int16(0)), "int32": reflect.TypeOf(int32(0)), "int64": reflect.TypeOf(int64(0)),
		"uint": reflect.TypeOf(uint(0)), "uint8": reflect.TypeOf(uint8(0)), "uint16": reflect.TypeOf(uint16(0)),
		"uint32": reflect.TypeOf(uint32(0)), "uint64": reflect.TypeOf(uint64(0)), "float32": reflect.TypeOf(float32(0)),
		"float64": reflect.TypeOf(0.0), "string": reflect.TypeOf(""),
		"interface {}": reflect.TypeOf((*interface{})(nil)).Elem(),
	}
	if t, ok := basic[name]; ok {
		return t
	}
	if strings.HasPrefix(name, "[]") {
		if elem := passatkType(name[2:]); elem != nil {
			return reflect.SliceOf(elem)
		}
		return nil
	}
	if strings.HasPrefix(name, "[") {
		end := strings.IndexByte(name, ']')
		n, err := strconv.Atoi(name[1:passatkAtLeast1(end)])
		if end < 0 || err != nil || n < 0 || n > 1<<20 {
			return nil
		}
		if elem := passatkType(name[end+1:]); elem != nil {
			return reflect.ArrayOf(n, elem)
		}
		return nil
	}
	if strings.HasPrefix(name, "map[") {
		depth := 0
		for i := 3; i < len(name); i++ {
			if name[i] == '[' {
				depth++
			} else if name[i] == ']' {
				depth--
				if depth == 0 {
					key, elem := passatkType(name[4:i]), passatkType(name[i+1:])
					if key == nil || elem == nil || !key.Comparable() {
						return nil
					}
					return reflect.MapOf(key, elem)
				}
			}
		}
	}
	return nil
}

func passatkAtLeast1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

func passatkDecode(tree interface{}, t reflect.Type, depth int) reflect.Value {
	if depth > passatkDepthLimit {
		passatkFail("nested more than %d deep", passatkDepthLimit)
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Bool:
		b, ok := tree.(bool)
		if !ok {
			passatkFail("expected a boolean for %s", t)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		num, ok := tree.(json.Number)
		n, err := strconv.ParseInt(string(num), 10, 64)
		if !ok || err != nil || v.OverflowInt(n) {
			passatkFail("expected an integer in the range of %s", t)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		num, ok := tree.(json.Number)
		n, err := strconv.ParseUint(string(num), 10, 64)
		if !ok || err != nil || v.OverflowUint(n) {
			passatkFail("expected an integer in the range of %s", t)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		items := passatkTagged(tree, "f")
		text, ok := "", len(items) == 1
		if ok {
			text, ok = items[0].(string)
		}
		f, err := strconv.ParseFloat(text, t.Bits())
		if !ok || err != nil {
			passatkFail("expected a float for %s", t)
		}
		v.SetFloat(f)
	case reflect.String:
		s, ok := tree.(string)
		if !ok {
			passatkFail("expected a string")
		}
		raw := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xff {
				passatkFail("a string character above \\u00ff")
			}
			raw = append(raw, byte(r))
		}
		v.SetString(string(raw))
	case reflect.Slice, reflect.Array:
		if tree == nil && t.Kind() == reflect.Slice {
			return v
		}
		items := passatkTagged(tree, "l")
		if t.Kind() == reflect.Array {
			if len(items) != t.Len() {
				passatkFail("expected %d items for %s", t.Len(), t)
			}
		} else {
			v.Set(reflect.MakeSlice(t, len(items), len(items)))
		}
		for i, item := range items {
			v.Index(i).Set(passatkDecode(item, t.Elem(), depth+1))
		}
	case reflect.Map:
		if tree == nil {
			return v
		}
		items := passatkTagged(tree, "d")
		v.Set(reflect.MakeMapWithSize(t, len(items)))
		for _, item := range items {
			pair := passatkTagged(item, "t")
			if len(pair) != 2 {
				passatkFail("expected [\"t\", key, value]")
			}
			key := passatkDecode(pair[0], t.Key(), depth+1)
			if v.MapIndex(key).IsValid() {
				passatkFail("a key twice in a map")
			}
			v.SetMapIndex(key, passatkDecode(pair[1], t.Elem(), depth+1))
		}
	case reflect.Interface:
		if tree == nil || t.NumMethod() != 0 {
			if tree != nil {
				passatkFail("a value for %s", t)
			}
			return v
		}
		items, ok := tree.([]interface{})
		if ok && len(items) == 2 && items[0] == "x" {
			if name, ok := items[1].(string); ok {
				v.Set(reflect.ValueOf(passatkOpaque{name}))
				return v
			}
		}
		items = passatkTagged(tree, "a")
		name, ok := "", len(items) == 2
		if ok {
			name, ok = items[0].(string)
		}
		inner := passatkType(name)
		if !ok || inner == nil {
			passatkFail("expected [\"a\", type, value]")
		}
		v.Set(passatkDecode(items[1], inner, depth+1))
	default:
		passatkFail("a value of type %s", t)
	}
	return v
}

// passatkServeMain is the call server's TestMain: it answers calls of f on descriptor 3 until the channel closes.
func passatkServeMain(m *testing.M, f interface{}) {
	_ = m
	channel := os.NewFile(3, "passatk-call")
	in := bufio.NewReaderSize(channel, 1<<16)
	fv := reflect.ValueOf(f)
	for {
		line, why := passatkReadLine(in)
		if why != "" {
			os.Exit(0)
		}
		if _, err := channel.WriteString(passatkAnswer(fv, line) + "\n"); err != nil {
			os.Exit(0)
		}
	}
}

func passatkAnswer(fv reflect.Value, line []byte) (answer string) {
	defer func() {
		if r := recover(); r != nil {
			var b strings.Builder
			b.WriteString(`["raised",`)
			if bad, ok := r.(passatkBad); ok {
				passatkQuote(&b, "passatk: a call the server cannot read: "+bad.why)
			} else {
				passatkQuote(&b, fmt.Sprint(r))
			}
			b.WriteByte(']')
			answer = b.String()
		}
	}()
	ft := fv.Type()
	args, ok := passatkParse(line).([]interface{})
	if !ok || len(args) != ft.NumIn() {
		passatkFail("expected %d arguments", ft.NumIn())
	}
	in := make([]reflect.Value, len(args))
	for i, arg := range args {
		in[i] = passatkDecode(arg, ft.In(i), 1)
	}
	out := fv.Call(in)
	var b strings.Builder
	b.WriteString(`["ok",`)
	passatkEncode(&b, out[0])
	b.WriteByte(']')
	return b.String()
}

var (
	passatkLock    sync.Mutex
	passatkChannel *os.File
	passatkIn      *bufio.Reader
)

func passatkBreak(why string) {
	fmt.Fprintf(os.Stderr, "passatk: protocol violation: %s\n", why)
	os.Exit(passatkBroken)
}

// passatkCall is the judge's proxy: it sends a call of f to the call server and stores the answer in *result.
func passatkCall(f interface{}, result interface{}, args ...interface{}) {
	passatkLock.Lock()
	defer passatkLock.Unlock()
	if passatkChannel == nil {
		passatkChannel = os.NewFile(3, "passatk-call")
		passatkIn = bufio.NewReaderSize(passatkChannel, 1<<16)
	}
	ft := reflect.TypeOf(f)
	var b strings.Builder
	b.WriteByte('[')
	for i, arg := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		v := reflect.New(ft.In(i)).Elem()
		if arg != nil {
			v.Set(reflect.ValueOf(arg))
		}
		passatkEncode(&b, v)
	}
	b.WriteString("]\n")
	if _, err := passatkChannel.WriteString(b.String()); err != nil {
		fmt.Fprintln(os.Stderr, "passatk: the sample's process ended")
		os.Exit(passatkBroken)
	}
	line, why := passatkReadLine(passatkIn)
	if why == "the sample's process ended" {
		fmt.Fprintln(os.Stderr, "passatk: "+why)
		os.Exit(passatkBroken)
	} else if why != "" {
		passatkBreak(why)
	}
	raised, message := false, ""
	func() {
		defer func() {
			if r := recover(); r != nil {
				if bad, ok := r.(passatkBad); ok {
					passatkBreak(bad.why)
				}
				panic(r)
			}
		}()
		answer, ok := passatkParse(line).([]interface{})
		if !ok || len(answer) != 2 || (answer[0] != "ok" && answer[0] != "raised") {
			passatkFail("expected [\"ok\", value] or [\"raised\", message]")
		}
		if answer[0] == "raised" {
			message, raised = answer[1].(string)
			if !raised {
				passatkFail("expected [\"raised\", message]")
			}
			return
		}
		reflect.ValueOf(result).Elem().Set(passatkDecode(answer[1], ft.Out(0), 1))
	}()
	if raised {
		panic("passatk: the sample raised: " + message)
	}
}
