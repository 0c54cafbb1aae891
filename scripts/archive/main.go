// Command archive writes a .tar.gz or .zip archive (by the output name's
// extension) of the named files, each stored under its base name, with
// executable modes kept. scripts/dist.sh uses it to lay out release
// archives the way goreleaser does when goreleaser itself is not
// installed.
//
// Usage: go run ./scripts/archive -o OUT.tar.gz|OUT.zip FILE...
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("o", "", "output archive (.tar.gz or .zip)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: archive -o OUT.tar.gz|OUT.zip FILE...")
		os.Exit(2)
	}
	if err := write(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

func write(out string, files []string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	switch {
	case strings.HasSuffix(out, ".zip"):
		zw := zip.NewWriter(f)
		for _, name := range files {
			if err := addZip(zw, name); err != nil {
				return err
			}
		}
		if err := zw.Close(); err != nil {
			return err
		}
	case strings.HasSuffix(out, ".tar.gz"):
		gw := gzip.NewWriter(f)
		tw := tar.NewWriter(gw)
		for _, name := range files {
			if err := addTar(tw, name); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if err := gw.Close(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s: want .tar.gz or .zip", out)
	}
	return f.Close()
}

func addTar(tw *tar.Writer, name string) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	h, err := tar.FileInfoHeader(st, "")
	if err != nil {
		return err
	}
	h.Name = filepath.Base(name)
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	return copyFile(tw, name)
}

func addZip(zw *zip.Writer, name string) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	h, err := zip.FileInfoHeader(st)
	if err != nil {
		return err
	}
	h.Name, h.Method = filepath.Base(name), zip.Deflate
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	return copyFile(w, name)
}

func copyFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
