package pdfcheck

// A second opinion on PDFA (issue 51): PDFBox Preflight, the PDF/A-1b
// validator Debian's libpdfbox2-java ships, run on a set of files in one
// Java process. PDF/A-1b asks for more than PDF/A-2b in a few places;
// Preflight's findings on those are set aside by PDFA1Only, each with
// the clause it checks and why PDF/A-2b does not ask it.

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// PreflightJars are the jars Preflight needs on the class path, in
// Debian's /usr/share/java (libpdfbox2-java, libcommons-logging-java,
// libjaxb-api-java, libactivation-java).
var PreflightJars = []string{"preflight.jar", "pdfbox2.jar", "fontbox2.jar", "xmpbox.jar",
	"commons-logging.jar", "jaxb-api.jar", "javax.activation.jar"}

// PreflightDir is where PreflightJars are looked for.
var PreflightDir = "/usr/share/java"

// PreflightMissing says why Preflight cannot run here, "" when it can.
func PreflightMissing() string {
	return javaMissing(PreflightJars, "libpdfbox2-java, libjaxb-api-java and libactivation-java")
}

// javaMissing says why java cannot run with jars (in PreflightDir, which
// make deps fills with the Debian packages pkgs), "" when it can.
func javaMissing(jars []string, pkgs string) string {
	if _, err := exec.LookPath("java"); err != nil {
		return "java is not installed (make deps installs default-jdk-headless)"
	}
	for _, j := range jars {
		if _, err := os.Stat(filepath.Join(PreflightDir, j)); err != nil {
			return j + " is not in " + PreflightDir + " (make deps installs " + pkgs + ")"
		}
	}
	return ""
}

// classPath is java's class path of jars, in PreflightDir.
func classPath(jars []string) string {
	cp := make([]string, len(jars))
	for i, j := range jars {
		cp[i] = filepath.Join(PreflightDir, j)
	}
	return strings.Join(cp, ":")
}

// PreflightError is one of Preflight's findings: its error code (the
// clause of ISO 19005-1 it tests, in Preflight's numbering) and details.
type PreflightError struct {
	Code    string `xml:"code"`
	Details string `xml:"details"`
}

func (e PreflightError) String() string { return e.Code + " " + e.Details }

// pdfa1Only are Preflight's findings on rules PDF/A-1 has and PDF/A-2b
// does not: a code and a part of its details, and why.
var pdfa1Only = []struct{ code, details, why string }{
	{"1.4", "cross reference streams", "ISO 19005-1 6.1.4 forbids cross-reference streams (and so object streams, which need them); ISO 19005-2 6.1.4 allows both"},
	{"1.2.12", "JPX", "ISO 19005-1 6.1.10 forbids the JPXDecode filter (JPEG 2000); ISO 19005-2 6.2.8.3 allows it"},
	{"2", "JPEG2000", "Preflight cannot decode JPEG 2000 without Java's JAI image tools; PDF/A-1 forbids JPEG 2000 anyway, ISO 19005-2 6.2.8.3 allows it"},
	{"2.2", "", "ISO 19005-1 6.4 forbids transparency groups and soft masks; ISO 19005-2 6.2.10 allows transparency"},
	{"4", "", "ISO 19005-1 6.4 forbids transparency (soft masks, constant alpha, blend modes in graphics states); ISO 19005-2 6.2.10 allows it"},
	{"3.1.11", "CIDSet", "ISO 19005-1 6.3.5 requires a subset CID font's CIDSet; ISO 19005-2 6.2.11.4.2 makes it optional (only a CIDSet present must be right)"},
	{"7.11", "part", "ISO 19005-1 6.7.11 wants pdfaid:part 1; a PDF/A-2b file says 2 (ISO 19005-2 6.6.4)"},
}

// PDFA1Only says why Preflight's finding e is on a rule PDF/A-2b does
// not have, "" when PDF/A-2b has it too.
func PDFA1Only(e PreflightError) string {
	for _, r := range pdfa1Only {
		if (e.Code == r.code || strings.HasPrefix(e.Code, r.code+".")) && strings.Contains(strings.ToLower(e.Details), strings.ToLower(r.details)) {
			return r.why
		}
	}
	return ""
}

// Preflight runs Preflight on the PDFs at paths, in one process, and
// returns its findings for each, in the order of paths, those of
// PDFA1Only included. dir is a scratch folder the caller removes.
func Preflight(ctx context.Context, dir string, paths []string) ([][]PreflightError, error) {
	list := filepath.Join(dir, "preflight.txt")
	if err := os.WriteFile(list, []byte(strings.Join(paths, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "java", "-XX:TieredStopAtLevel=1", "-cp", classPath(PreflightJars),
		"org.apache.pdfbox.preflight.Validator_A1b", "xml", "group", list)
	if out, err := cmd.CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("java (Preflight): %w", err)
		}
		_ = out // it exits non-zero when a file is not valid
	}
	b, err := os.ReadFile(list + ".preflight.xml")
	if err != nil {
		return nil, fmt.Errorf("Preflight wrote no report: %w", err)
	}
	var report struct {
		Files []struct {
			Name   string           `xml:"name,attr"`
			Errors []PreflightError `xml:"errors>error"`
			Broken string           `xml:"exceptionThrow>message"`
		} `xml:"preflight"`
	}
	if err := xml.Unmarshal(b, &report); err != nil {
		return nil, fmt.Errorf("reading Preflight's report: %w", err)
	}
	if len(report.Files) != len(paths) {
		return nil, fmt.Errorf("Preflight reported on %d files of %d", len(report.Files), len(paths))
	}
	out := make([][]PreflightError, len(paths))
	for i, f := range report.Files {
		out[i] = f.Errors
		if f.Broken != "" {
			out[i] = append(out[i], PreflightError{Code: "exception", Details: f.Broken})
		}
	}
	return out, nil
}
