package store

import (
	"bytes"
	"strconv"
	"strings"
)

// ParseStoredRegistry parses a schema as a store keeps it, and returns what ParseRegistry
// returns for the same text. A store keeps its schema in the form Registry.YAML writes,
// which this reads line by line without a YAML parser (yaml.v3 took 27 ms of CPU for a
// schema of 50 kinds of 40 fields, most of what opening such a store cost); any other text,
// and any text that the schema read from it does not write back exactly, is left to
// ParseRegistry. Errors (EINVALID) are ParseRegistry's.
func ParseStoredRegistry(name string, data []byte) (*Registry, error) {
	if r := parseWritten(data); r != nil {
		return r, nil
	}
	return ParseRegistry(name, data)
}

// parseWritten reads data in Registry.YAML's form, or returns nil when data is not in it or
// does not make a schema.
func parseWritten(data []byte) *Registry {
	lines := strings.Split(string(data), "\n")
	if len(lines) < 2 || lines[0] != "kinds:" || lines[len(lines)-1] != "" {
		return nil
	}
	lines = lines[1 : len(lines)-1]
	r := newRegistry()
	var def *KindDef
	add := func() bool {
		return def == nil || len(def.Fields) > 0 && r.add(def) == nil
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "      - {") && strings.HasSuffix(l, "}"):
			if def == nil {
				return nil
			}
			f := parseWrittenField(l[len("      - {") : len(l)-1])
			if f == nil {
				return nil
			}
			def.Fields = append(def.Fields, f)
		case strings.HasPrefix(l, "    "):
			if def == nil {
				return nil
			}
			key, val, ok := strings.Cut(l[4:], ": ")
			switch {
			case l == "    fields:":
			case l == "    tree: true":
				def.Tree = true
			case ok && key == "table":
				if def.Table, ok = writtenString(val); !ok {
					return nil
				}
			case ok && key == "title":
				if def.Title, ok = writtenString(val); !ok {
					return nil
				}
			default:
				return nil
			}
		case strings.HasPrefix(l, "  ") && strings.HasSuffix(l, ":"):
			if !add() {
				return nil
			}
			def = &KindDef{Name: Kind(l[2 : len(l)-1])}
		default:
			return nil
		}
	}
	if def == nil || !add() || r.finish() != nil || !bytes.Equal(r.YAML(), data) {
		return nil
	}
	return r
}

// writtenString reads a scalar as yamlString writes it: plain, or double-quoted with Go's
// escapes.
func writtenString(s string) (string, bool) {
	if strings.HasPrefix(s, `"`) {
		v, err := strconv.Unquote(s)
		return v, err == nil
	}
	return s, s != ""
}

// parseWrittenField reads the inside of a field's flow mapping as Registry.YAML writes it,
// or returns nil.
func parseWrittenField(s string) *Field {
	f := new(Field)
	for s != "" {
		key, rest, ok := strings.Cut(s, ": ")
		if !ok {
			return nil
		}
		var val string
		var vals []string
		switch {
		case strings.HasPrefix(rest, `"`):
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil
			}
			if val, err = strconv.Unquote(q); err != nil {
				return nil
			}
			rest = rest[len(q):]
		case strings.HasPrefix(rest, "["):
			rest = rest[1:]
			for {
				var item string
				if strings.HasPrefix(rest, `"`) {
					q, err := strconv.QuotedPrefix(rest)
					if err != nil {
						return nil
					}
					if item, err = strconv.Unquote(q); err != nil {
						return nil
					}
					rest = rest[len(q):]
				} else {
					end := strings.IndexAny(rest, ",]")
					if end <= 0 {
						return nil
					}
					item, rest = rest[:end], rest[end:]
				}
				vals = append(vals, item)
				if strings.HasPrefix(rest, "]") {
					rest = rest[1:]
					break
				}
				if !strings.HasPrefix(rest, ", ") {
					return nil
				}
				rest = rest[2:]
			}
		default:
			end := strings.Index(rest, ", ")
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		if rest != "" {
			if !strings.HasPrefix(rest, ", ") {
				return nil
			}
			rest = rest[2:]
		}
		s = rest
		if !setWritten(f, key, val, vals) {
			return nil
		}
	}
	return f
}

// setWritten sets the field's key to val (vals for values), or reports false for a key or
// value Registry.YAML does not write.
func setWritten(f *Field, key, val string, vals []string) bool {
	num := func(n *int) bool {
		v, err := strconv.Atoi(val)
		*n = v
		return err == nil
	}
	flag := func(b *bool) bool {
		*b = true
		return val == "true"
	}
	switch key {
	case "name":
		f.Name = val
	case "label":
		f.Label = val
	case "type":
		f.Type = Type(val)
	case "to":
		f.To = Kind(val)
	case "owner":
		f.Owner = Owner(val)
	case "rule":
		f.Rule = Rule(val)
	case "group":
		f.Group = val
	case "required":
		return flag(&f.Required)
	case "readonly":
		return flag(&f.ReadOnly)
	case "unique":
		return flag(&f.Unique)
	case "search":
		return flag(&f.Search)
	case "sort":
		return flag(&f.Sort)
	case "max_chars":
		return num(&f.MaxChars)
	case "max_bytes":
		return num(&f.MaxBytes)
	case "max_items":
		return num(&f.MaxItems)
	case "values":
		f.Values = vals
		return vals != nil
	case "default":
		f.Default = val
	case "rename_from":
		f.RenameFrom = val
	case "worker":
		f.Worker = val
	default:
		return false
	}
	return vals == nil
}
