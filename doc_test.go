package delego_test

import (
	"errors"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExportedNamesDocumented fails on an exported name without a doc
// comment in the public packages: the package itself, constants,
// variables, functions, types, methods, and struct fields that have no
// comment of their own and are named neither in their type's comment nor
// in a neighbour's (a comment over a group of fields).
func TestExportedNamesDocumented(t *testing.T) {
	// The public packages, each with the packages below it but the root's.
	for _, root := range []string{".", "adapters", "pipeline", "tune", "compat/tflite", "serve"} {
		dirs := []string{root}
		if root != "." {
			dirs = nil
			err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				if d.IsDir() {
					dirs = append(dirs, path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, dir := range dirs {
			for _, name := range undocumented(t, dir) {
				t.Errorf("%s: %s has no doc comment", dir, name)
			}
		}
	}
}

// undocumented returns the exported names of the package in dir (its
// files for this platform, tests left out) that have no doc comment;
// nothing when dir holds no Go package.
func undocumented(t *testing.T, dir string) []string {
	bp, err := build.ImportDir(dir, 0)
	var noGo *build.NoGoError
	if errors.As(err, &noGo) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, bp.ImportPath)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	if d.Doc == "" {
		missing = append(missing, "package "+d.Name)
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			if v.Doc != "" {
				continue // a group's comment documents its names
			}
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Doc == nil && vs.Comment == nil {
					for _, n := range vs.Names {
						if n.IsExported() {
							missing = append(missing, n.Name)
						}
					}
				}
			}
		}
	}
	funcs := func(recv string, fs []*doc.Func) {
		for _, f := range fs {
			if f.Doc == "" {
				missing = append(missing, recv+f.Name)
			}
		}
	}
	values(d.Consts)
	values(d.Vars)
	funcs("", d.Funcs)
	for _, typ := range d.Types {
		if typ.Doc == "" {
			missing = append(missing, "type "+typ.Name)
		}
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
		for _, spec := range typ.Decl.Specs {
			ts := spec.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			// A field the type's comment or another field's names (a
			// comment over a group of fields) is documented there.
			said := typ.Doc
			for _, f := range st.Fields.List {
				said += f.Doc.Text() + f.Comment.Text()
			}
			for _, f := range st.Fields.List {
				if f.Doc != nil || f.Comment != nil {
					continue
				}
				for _, n := range f.Names {
					if n.IsExported() && !regexp.MustCompile(`\b`+n.Name+`\b`).MatchString(said) {
						missing = append(missing, typ.Name+"."+n.Name)
					}
				}
			}
		}
	}
	return missing
}
