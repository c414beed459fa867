# refbatch — build, test and demo on a Debian machine with Go.
#
#   make build    bin/refbatch, stamped with its version (git describe)
#   make install  the binary, its man pages and bash/zsh completion under PREFIX
#   make demo     run refbatch on the built-in sample (testdata/sample) and print the report's path
#   make test     lint, vet, every test (real Tesseract, MuPDF, SQLite), then the eval gate
#   make eval     replay the evaluation corpus; fail if outcomes or OCR quality regressed
#
# deps installs the native dependencies with apt-get; demo and test run it
# first, build and install never do (they say to run it when they must).

GO            ?= go
BIN           := bin/refbatch
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEBIAN_DEPS   := libtesseract-dev libleptonica-dev tesseract-ocr-eng tesseract-ocr-osd tesseract-ocr pkg-config
# HAND_FONTS are the handwriting fonts refcorpus --handwriting,
# --signatures, --marks and --caps-notes write with (optional: without them refcorpus says which to
# install and its handwriting test skips).
HAND_FONTS    := fonts-dkg-handwriting fonts-dancingscript fonts-kristi fonts-breip fonts-femkeklaver fonts-humor-sans \
                 fonts-comic-neue fonts-bwht fonts-kaushanscript fonts-rufscript fonts-havana fonts-ecolier-court
DEMO_OUT      ?= demo-out
DEMO_KEY      ?= $(DEMO_OUT).key
TEST_TIMEOUT  ?= 30m
# TEST_SKIPS holds the count of skipped tests by reason (cmd/testsummary)
# while the gates run, for test to print it last: a CI that lost
# PostgreSQL, root or a tool says so.
TEST_SKIPS    ?= .test-skips
FUZZTIME      ?= 30s
PREFIX        ?= /usr/local
DESTDIR       ?=

# VERSION is what refbatch --version prints and every artifact's provenance
# and report records; without git (a source tarball) the Go toolchain's
# stamp or "devel" stands in.
VERSION       ?= $(shell git describe --always --dirty 2>/dev/null)
LDFLAGS       := $(if $(VERSION),-X github.com/refbatch/refbatch/batch/layout.version=$(VERSION))

export OMP_THREAD_LIMIT = 1

# -trimpath names source files by module path, not by the folder the
# checkout is in: binaries carry no builder's path, and a fresh clone (a
# CI checkout, a git worktree) reuses the build cache's compiled packages
# and vet's and staticcheck's findings instead of redoing them for a new
# folder (about 55 CPU-s of lint on this machine). Exported, so the go
# commands tests run (go run ./cmd/refcorpus, make install) share it.
export GOFLAGS += -trimpath

# eval replays the committed evaluation corpus (testdata/eval, or
# testdata/sample until that exists) and fails when an outcome differs or a
# figure crosses the corpus's thresholds.json.
EVAL_DIR      ?= $(if $(wildcard testdata/eval/manifest.csv),testdata/eval,testdata/sample)
EVAL_OUT      ?= eval-out
# EVAL_FLAGS are more run flags for eval, e.g. --cascade (with another
# EVAL_OUT) to set the cascade's figures against the default's, without it.
EVAL_FLAGS    ?=

.PHONY: all deps build install uninstall test lint fuzz mutate demo eval eval-probe holdout marks clean bench bench-hostile bench-desk bench-journal export-check

all: build

# deps installs Tesseract, its English and orientation data, and Leptonica
# from Debian's packages when any is missing. It needs root (or sudo). It
# also tries the tools some tests check refbatch's output with: chromium
# (report.html), poppler-utils, qpdf and libxml2-utils (export's PDF and
# ALTO), mupdf-tools and pdf.js (npm's pdfjs-dist, installed into
# testdata/pdfjs when node is there: the searchable PDF's readers), PDFBox
# (libpdfbox2-java with libjaxb-api-java, libactivation-java and
# default-jdk-headless: Preflight, a second opinion on --pdfa's PDF/A, and
# the text stripper Apache Tika reads PDFs with), man-db
# (the man pages), and the handwriting fonts (HAND_FONTS); without them
# those tests skip.
deps:
	@missing=""; for p in $(DEBIAN_DEPS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; \
	  else echo "deps: missing$$missing and not root; install them with apt-get as root" >&2; exit 1; fi; \
	  $$sudo apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || \
	  { echo "deps: apt-get could not install$$missing (no network to Debian's mirrors?)" >&2; exit 1; }; \
	fi
	@command -v chromium >/dev/null 2>&1 || { echo "deps: installing chromium (optional: a test renders report.html with it)"; if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo -n"; else sudo=false; fi; { $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium || { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }; } >/dev/null 2>&1 || echo "deps: note: chromium could not be installed; the report rendering test will be skipped"; }
	@missing=""; for c in pdftotext:poppler-utils qpdf:qpdf mutool:mupdf-tools xmllint:libxml2-utils man:man-db; do \
	  command -v $${c%%:*} >/dev/null 2>&1 || missing="$$missing $${c#*:}"; \
	done; \
	[ -z "$$missing" ] || { echo "deps: installing$$missing (optional: the export tests check PDFs and ALTO with them, the install test the man pages)"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo -n"; else sudo=false; fi; \
	  { $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing || \
	    { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; }; } >/dev/null 2>&1 || \
	  echo "deps: note:$$missing could not be installed; the tests that need them will be skipped"; }
	@missing=""; command -v java >/dev/null 2>&1 || missing=" default-jdk-headless"; \
	for c in preflight.jar:libpdfbox2-java jaxb-api.jar:libjaxb-api-java javax.activation.jar:libactivation-java; do \
	  [ -f /usr/share/java/$${c%%:*} ] || missing="$$missing $${c#*:}"; \
	done; \
	[ -z "$$missing" ] || { echo "deps: installing$$missing (optional: the export tests check PDF/A with PDFBox Preflight)"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo -n"; else sudo=false; fi; \
	  { $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing || \
	    { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; }; } >/dev/null 2>&1 || \
	  echo "deps: note:$$missing could not be installed; the Preflight checks will be skipped"; }
	@[ -d testdata/pdfjs/node_modules/pdfjs-dist ] || ! command -v npm >/dev/null 2>&1 || { echo "deps: installing pdf.js into testdata/pdfjs (optional: the export tests read the searchable PDF with it)"; \
	  (cd testdata/pdfjs && npm install --no-audit --no-fund --silent >/dev/null 2>&1) || echo "deps: note: pdf.js could not be installed; its reader checks will be skipped"; }
	@missing=""; for p in $(HAND_FONTS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] || { echo "deps: installing$$missing (optional: refcorpus --handwriting and --signatures write with them)"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo -n"; else sudo=false; fi; \
	  { $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing || \
	    { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; }; } >/dev/null 2>&1 || \
	  echo "deps: note:$$missing could not be installed; refcorpus cannot write handwriting and its handwriting test will be skipped"; }

# build installs nothing: without Tesseract's and Leptonica's development
# files it stops and says to run make deps.
build:
	@pkg-config --exists tesseract lept 2>/dev/null || \
	  { echo "build: Tesseract and Leptonica development files not found: run make deps (as root), or install $(DEBIAN_DEPS)" >&2; exit 1; }
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/refbatch

# install copies bin/refbatch to $(PREFIX)/bin, writes a man page per
# command (generated from the CLI's own definition) to
# $(PREFIX)/share/man/man1 and one per topic of the manual (refbatch help
# TOPIC) to $(PREFIX)/share/man/man7, and the bash and zsh completion
# scripts where those shells look under $(PREFIX). DESTDIR stages it for a
# package.
MANDIR        = $(DESTDIR)$(PREFIX)/share/man/man1
MAN7DIR       = $(DESTDIR)$(PREFIX)/share/man/man7
BASHCOMPDIR   = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR    = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(MANDIR) $(MAN7DIR) $(BASHCOMPDIR) $(ZSHCOMPDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/refbatch
	$(BIN) __man $(MANDIR) $(MAN7DIR)
	$(BIN) completion bash > $(BASHCOMPDIR)/refbatch
	$(BIN) completion zsh > $(ZSHCOMPDIR)/_refbatch

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/refbatch $(MANDIR)/refbatch.1 $(MANDIR)/refbatch-*.1 $(MAN7DIR)/refbatch-*.7 $(BASHCOMPDIR)/refbatch $(ZSHCOMPDIR)/_refbatch

# test runs the suite, then the two gates side by side: eval and holdout
# are two refbatch evals against their own thresholds, and each leaves the
# cores idle while it admits its corpus and waits on its last documents,
# which the other fills (-O prints each one's table whole). The tests run
# with -vet=off: lint has just run all of go vet on the same packages,
# their tests included, and go test's own vet pass is a subset of it that
# shares none of its cached work. -count=1: with -trimpath a fresh clone
# builds the same test binaries as the last one, and go test would
# otherwise report cached results for tests that read no files; make test
# runs every test. make build comes first so that cmd/refbatch's tests
# start from its binary (REFBATCH_TEST_SEED): their go build finds it up
# to date instead of linking it again. Four test binaries run at once on two
# cores: many tests wait on child processes, signals and timeouts, and
# with two at a time (go test's default on this machine) the cores sat
# idle a fifth of the run while cmd/refbatch, the longest package, waited
# a minute for a slot. go test's -json stream goes through cmd/testsummary,
# which prints what go test prints without it, then the skipped tests by
# reason (again after the gates): a test that cannot run here (no
# PostgreSQL, not root, a tool missing) says so instead of passing.
test: deps lint build
	REFBATCH_TEST_SEED=$(abspath $(BIN)) $(GO) run ./cmd/testsummary -skips $(TEST_SKIPS) \
	  $(GO) test -json -count=1 -p 4 -vet=off -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) --no-print-directory -j2 -O eval holdout
	@cat $(TEST_SKIPS); rm -f $(TEST_SKIPS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# fuzz runs each fuzz target for FUZZTIME: the manifest parser, then the
# whole admission path through a real admission child.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzReader -fuzztime $(FUZZTIME) ./manifest
	$(GO) test -run '^$$' -fuzz FuzzAdmit -fuzztime $(FUZZTIME) ./batch/admit

# mutate measures whether the tests would catch a careless change: gremlins
# (pinned, from the Go module proxy; go.mod is left alone) flips each
# comparison, condition and arithmetic operator of a package's own files,
# one at a time, and runs that package's tests against it. A mutant the
# tests pass is a bug they would let through. It prints each package's
# share of killed mutants among those its tests cover, and every survivor
# as file:line, and fails when a package is under MUTATE_THRESHOLD percent.
# In the batch root only MUTATE_BATCH_FILES are mutated; a package's
# subfolders are theirs (-E /). Slow (a test run per mutant): not part of
# test. MUTATE_PKGS=report/outcome measures one package; MUTATE_FILES (file
# names) mutates only those of it, first the files where a bug costs trust
# in a package that cannot be measured whole in the time there is;
# MUTATE_RUN (a go test -run pattern) runs only those tests against each
# mutant, for a package whose whole suite is minutes, and MUTATE_SKIP (a
# -skip pattern) leaves out a test that fails under load (gremlins then
# cannot even gather coverage): a mutant only the other tests would kill
# then counts as lived or not covered, so the score is a floor. Each package's
# temporary folders are in a folder of its own, outside the module (gremlins
# copies the module into them): a test that mounts a small tmpfs (store's
# disk-full test, as root) and is cut short by a mutant's timeout leaves
# its mount there, which the target unmounts. go test's vet is off
# (-vet=off): make lint vets the code, and a mutant's test run spent a
# third of its time vetting the mutated package again.
GREMLINS           := github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
MUTATE_PKGS        ?= batch/journal batch/store batch/audit batch/admit report/outcome manifest batch/desk batch/export/pdfcheck batch
MUTATE_BATCH_FILES := breaker.go settle.go validate.go
MUTATE_THRESHOLD   ?= 85
MUTATE_WORKERS     ?= 1
# MUTATE_TIMEOUT is gremlins' timeout coefficient: a mutant's go test,
# its build included, may take that many times the first, covered run
# before it counts as timed out (neither killed nor lived). Its default,
# 3, timed out builds on the shared 2-core machine.
MUTATE_TIMEOUT     ?= 6
MUTATE_OUT         ?= mutate-out
empty              :=
space              := $(empty) $(empty)
MUTATE_FILES       ?=
MUTATE_RUN         ?=
MUTATE_SKIP        ?=
rparen             := )
# mutate_skip is the files of package $(1) left unmutated, joined by |.
mutate_files        = $(or $(MUTATE_FILES),$(if $(filter batch,$(1)),$(MUTATE_BATCH_FILES)))
mutate_skip         = $(if $(mutate_files),$(subst $(space),|,$(filter-out $(mutate_files),$(notdir $(filter-out %_test.go,$(wildcard $(1)/*.go))))))

mutate:
	@mkdir -p $(MUTATE_OUT); low=""; \
	for p in $(MUTATE_PKGS); do \
	  name=$$(echo $$p | tr / -); log=$(MUTATE_OUT)/$$name.log; \
	  skip=""; case $$p in $(foreach q,$(MUTATE_PKGS),$(if $(call mutate_skip,$(q)),$(q)$(rparen) skip='^($(call mutate_skip,$(q)))$$';;)) esac; \
	  echo "mutate: $$p ..."; tmp=$$(mktemp -d -t refbatch-mutate.XXXXXX) || exit 1; \
	  TMPDIR=$$tmp GOFLAGS='$(strip $(GOFLAGS) -vet=off $(if $(MUTATE_RUN),-run=$(MUTATE_RUN)) $(if $(MUTATE_SKIP),-skip=$(MUTATE_SKIP)))' $(GO) run $(GREMLINS) unleash --workers $(MUTATE_WORKERS) --timeout-coefficient $(MUTATE_TIMEOUT) --invert-logical -E / $${skip:+-E "$$skip"} \
	       -o $(MUTATE_OUT)/$$name.json ./$$p >$$log 2>&1; rc=$$?; \
	  grep -s " $$tmp/" /proc/mounts | cut -d' ' -f2 | xargs -r umount; rm -rf $$tmp; \
	  if [ $$rc -ne 0 ]; then \
	    tail -20 $$log; echo "mutate: $$p: gremlins failed (above; all of it in $$log)"; low="$$low $$p"; continue; \
	  fi; \
	  sed -n "s#^ *\(LIVED\|TIMED OUT\) *\([A-Z_]*\) at \(.*\)#  $$p/\3: \1 \2#p" $$log; \
	  set -- $$(sed -n 's/^Killed: \([0-9]*\), Lived: \([0-9]*\), Not covered: \([0-9]*\).*/\1 \2 \3/p' $$log) 0 0 0; \
	  if [ $$(($$1 + $$2)) -eq 0 ]; then echo "mutate: $$p: no mutant its tests cover ($$3 not covered)"; low="$$low $$p"; continue; fi; \
	  score=$$((100 * $$1 / ($$1 + $$2))); \
	  echo "mutate: $$p: $$score% ($$1 of $$(($$1 + $$2)) covered mutants killed; $$3 not covered)"; \
	  [ $$score -ge $(MUTATE_THRESHOLD) ] || low="$$low $$p"; \
	done; \
	if [ -n "$$low" ]; then echo "mutate: under $(MUTATE_THRESHOLD)%:$$low"; exit 1; fi

# demo imports the built-in sample with encrypted artifacts: it makes a demo
# identity once (keep it out of the output folder), then runs the batch.
demo: deps build
	@[ -f $(DEMO_KEY) ] || ./$(BIN) keygen --out $(DEMO_KEY) >/dev/null
	@rm -rf $(DEMO_OUT)
	./$(BIN) run --quiet --out $(DEMO_OUT) \
	  --recipient "$$(grep -o 'age1[0-9a-z]*' $(DEMO_KEY) | head -1)" testdata/sample/manifest.csv \
	  || [ $$? -eq 4 ] # the sample's bad rows are refused on purpose: 4 says rows need a person

# eval prints the table (outcomes, CER, WER, field recall, calibration) and
# writes $(EVAL_OUT)/eval.json; see refbatch help eval.
# The corpus's too_large row is a 2.1 MB file: eval caps files at 2 MB.
eval: build
	./$(BIN) eval --quiet --expect $(EVAL_DIR)/expected.csv --truth $(EVAL_DIR)/truth \
	  --thresholds $(EVAL_DIR)/thresholds.json --max-bytes 2000000 --out $(EVAL_OUT) $(EVAL_FLAGS) $(EVAL_DIR)/manifest.csv

# eval-probe calibrates the cascade ("Two resolutions" in refbatch help reading): the
# corpus read once at the first resolution, then once at the full one,
# both with --no-cascade; the second prints the thresholds the pair
# supports (and gates the full-resolution reading as eval does).
eval-probe: build
	./$(BIN) eval --quiet --expect $(EVAL_DIR)/expected.csv --truth $(EVAL_DIR)/truth \
	  --max-bytes 2000000 --no-cascade --dpi 200 --out $(EVAL_OUT)-first $(EVAL_DIR)/manifest.csv || true
	./$(BIN) eval --quiet --expect $(EVAL_DIR)/expected.csv --truth $(EVAL_DIR)/truth \
	  --thresholds $(EVAL_DIR)/thresholds.json --max-bytes 2000000 --no-cascade --out $(EVAL_OUT)-full \
	  --cascade-probe $(EVAL_OUT)-first $(EVAL_DIR)/manifest.csv

# holdout replays testdata/holdout, coverage documents kept out of every
# calibration, against the thresholds calibrated on testdata/eval: it
# checks the coverage threshold on cases it has not seen.
HOLDOUT_OUT   ?= holdout-out
holdout: build
	./$(BIN) eval --quiet --expect testdata/holdout/expected.csv --truth testdata/holdout/truth \
	  --thresholds testdata/holdout/thresholds.json --out $(HOLDOUT_OUT) testdata/holdout/manifest.csv

# marks measures the handwriting step on letters it was not tuned on:
# refcorpus draws MARKS_DOCS signed letters (half stamped, two in five
# marked in a margin, none with a note) from the held-out families of
# signatures, stamps and margin marks, and MARKS_CAPS letters with a note
# in block capitals, with seed MARKS_SEED, into MARKS_DIR; refbatch eval
# reads them into MARKS_OUT and prints, per family, the documents sent to
# review handwriting, and the held-out share ("Marks that are not notes"
# in refbatch help development). It reports and does not gate: a new
# seed is a new sample of letters nobody here drew.
MARKS_SEED    ?= 51
MARKS_DOCS    ?= 80
MARKS_CAPS    ?= 12
MARKS_FAMILIES ?= held-out
MARKS_DIR     ?= marks-corpus
MARKS_OUT     ?= marks-out
marks: build
	rm -rf $(MARKS_DIR) $(MARKS_OUT)
	$(GO) run ./cmd/refcorpus --seed $(MARKS_SEED) --docs 0 --marks $(MARKS_DOCS) --caps-notes $(MARKS_CAPS) \
	  --mark-families $(MARKS_FAMILIES) --out $(MARKS_DIR)
	./$(BIN) eval --quiet --expect $(MARKS_DIR)/expected.csv --truth $(MARKS_DIR)/truth \
	  --out $(MARKS_OUT) $(MARKS_DIR)/manifest.csv || true

# export-check exports a finished batch's searchable PDFs into a scratch
# folder and checks each against its source and its artifact (issue 16's
# acceptance 1 and 2): pdftotext -raw CER, words on the source's ink, the
# 72 dpi renders, qpdf --check, pdfimages -list; and issue 50's: each
# reader's (pdftotext, -raw, mutool, pdf.js, PDFBox in content order and
# sorted) phrase recall (word trigrams of a line found), CER over sorted
# words and CER in reading order, and, exported with --pdfa, the PDF/A
# clauses (EXPORT_CHECK_FLAGS=-pdfa=false skips; -straighten exports with
# --straighten and leaves the pages redrawn out of the comparisons with
# the source). It prints per document and
# overall figures and fails when a document misses a line. The batch is
# eval-out (make eval) unless EXPORT_CHECK_OUT says otherwise; demo-out is
# decrypted with the demo key. Needs poppler-utils and qpdf (make deps).
EXPORT_CHECK_OUT   ?= $(EVAL_OUT)
EXPORT_CHECK_FLAGS ?=
export-check: build
	$(GO) build -o bin/refbench ./cmd/refbench
	./bin/refbench export-check --out $(EXPORT_CHECK_OUT) --refbatch $(BIN) \
	  $(if $(filter $(DEMO_OUT),$(EXPORT_CHECK_OUT)),--identity $(DEMO_KEY)) $(EXPORT_CHECK_FLAGS)

clean:
	rm -rf bin $(DEMO_OUT) $(DEMO_KEY) $(EVAL_OUT) $(EVAL_OUT)-first $(EVAL_OUT)-full $(HOLDOUT_OUT) bench-out $(MUTATE_OUT)

# bench measures refbatch side by side with the machine's render + OCR limit
# (pdftoppm + tesseract, one process per core) and OCRmyPDF on a refcorpus
# corpus of about 200 pages at 300 DPI, plus resume, memory against manifest
# rows and one long document; it prints a table and writes
# $(BENCH_OUT)/bench.json (see refbatch help benchmarks). Then the defaults
# check on three corpora (below). BENCH_DOCS=2400 is the
# weekend-import size. The corpus is generated once per seed, size and DPI.
# It installs poppler-utils when missing, and tries OCRmyPDF once (optional).
BENCH_DOCS    ?= 105
BENCH_SEED    ?= 1
BENCH_DPI     ?= 300
BENCH_OUT     ?= bench-out
BENCH_CORPUS  ?= $(BENCH_OUT)/corpus-s$(BENCH_SEED)-d$(BENCH_DOCS)-$(BENCH_DPI)dpi
BENCH_FLAGS   ?=
# The defaults check (issue 29, refbatch help benchmarks): refbench defaults
# runs refbatch's defaults and --cascade on the bench corpus, the eval
# corpus and the real corpus (skipped when REAL_CORPUS is absent), each
# against the render + OCR limit at BENCH_DPI measured in the same run,
# and fails (exit 1, so make bench fails) when the default's pages per
# minute by CPU are under 0.9 of the limit's on one of them.
# DEFAULTS_FLAGS, e.g. --max-docs 25, keeps it small on a shared machine.
REAL_CORPUS   ?= ../shared/corpus/real
DEFAULTS_FLAGS ?=

bench: build
	@if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else sudo=false; fi; \
	command -v pdftoppm >/dev/null 2>&1 || { echo "bench: installing poppler-utils (pdftoppm renders the limit's pages)"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends poppler-utils >/dev/null 2>&1 || \
	  { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends poppler-utils >/dev/null; } || \
	  { echo "bench: apt-get could not install poppler-utils" >&2; exit 1; }; }; \
	mkdir -p $(BENCH_OUT); \
	command -v ocrmypdf >/dev/null 2>&1 || [ -f $(BENCH_OUT)/.ocrmypdf-tried ] || { touch $(BENCH_OUT)/.ocrmypdf-tried; \
	  echo "bench: trying to install ocrmypdf (optional, 3 minutes at most)"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive timeout 180 apt-get install -y -qq --no-install-recommends ocrmypdf >/dev/null 2>&1 || \
	  echo "bench: note: ocrmypdf could not be installed; its column is skipped"; }
	$(GO) build -o bin/refcorpus ./cmd/refcorpus
	$(GO) build -o bin/refbench ./cmd/refbench
	@[ -f $(BENCH_CORPUS)/manifest.csv ] || { echo "bench: generating $(BENCH_DOCS) documents into $(BENCH_CORPUS)"; \
	  rm -rf $(BENCH_CORPUS) && ./bin/refcorpus --seed $(BENCH_SEED) --docs $(BENCH_DOCS) --dpi-set $(BENCH_DPI) --out $(BENCH_CORPUS); }
	./bin/refbench --corpus $(BENCH_CORPUS) --out $(BENCH_OUT) --refbatch $(BIN) --dpi $(BENCH_DPI) $(BENCH_FLAGS)
	./bin/refbench defaults --bench $(BENCH_CORPUS) --eval testdata/eval --real $(REAL_CORPUS) \
	  --out $(BENCH_OUT)/defaults --refbatch $(BIN) --dpi $(BENCH_DPI) $(DEFAULTS_FLAGS)

# bench-hostile runs every file of testdata/admit/hostile (refused at
# admission) and testdata/admit/budget (stopped in the workers) between two good
# 300 DPI documents under ulimit -v 4 GiB and prints, per file, the wall,
# the peak memory of the whole process tree and the outcomes (issue 12's
# table). It needs no poppler or OCRmyPDF.
HOSTILE_CORPUS ?= $(BENCH_OUT)/corpus-hostile-300dpi
bench-hostile: build
	$(GO) build -o bin/refcorpus ./cmd/refcorpus
	$(GO) build -o bin/refbench ./cmd/refbench
	@[ -f $(HOSTILE_CORPUS)/manifest.csv ] || { rm -rf $(HOSTILE_CORPUS) && ./bin/refcorpus --seed 1 --docs 2 --dpi-set 300 --out $(HOSTILE_CORPUS); }
	./bin/refbench --corpus $(HOSTILE_CORPUS) --out $(BENCH_OUT) --json $(BENCH_OUT)/bench-hostile.json --refbatch $(BIN) --dpi 300 \
	  --default=false --fast=false --no-coverage=false --limit=false --ocrmypdf=false --long-pages 0 --resume-rows 0 --big-rows 0 --hostile testdata/admit/hostile,testdata/admit/budget

# bench-desk measures the review desk in a headless Chromium (README,
# "Deciding at the desk"): a 300 dpi Letter page not rendered before on
# screen, the next document once the desk preloaded it, the desk's peak
# RSS over 50 page views, and no file created under the output folder, the
# temp folder or the working folder (it fails on one, or on 300 MiB). It
# needs chromium and poppler-utils (pdftoppm makes the 300 dpi pages).
bench-desk:
	$(GO) test ./cmd/refbatch -run '^$$' -bench BenchmarkDesk -benchtime 1x -count 1 -v

# bench-journal measures the journal alone, on a PostgreSQL cluster it
# starts (fsync on) and removes (.ci/with-postgres): one-page documents
# admitted by one handle while 4, 16 and 64 workers, each a handle of its
# own, claim and finish them, through a proxy adding 0, 0.5 and 1 ms of
# round trip (BenchmarkWorkers in batch/journal). It prints documents a
# second, the share of the time the custody lock was held, the
# transactions that took it per document, the round trip added as
# measured and the machine's CPU in use (1: every core, other processes'
# too). BENCH_JOURNAL_FSYNC=off leaves the disk's sync out, as the tests'
# cluster does, to show what bounds the journal beside it.
# BENCH_JOURNAL_BEFORE=REV (a git revision) runs each case for REV's
# journal and then for this tree's, on one cluster, so that the two are
# measured side by side under the same load (batch/journal/testdata/
# bench-journal.sh).
BENCH_JOURNAL_DOCS   ?= 2000
BENCH_JOURNAL_FSYNC  ?= on
BENCH_JOURNAL_BEFORE ?=
bench-journal:
	GO=$(GO) .ci/with-postgres --fsync $(BENCH_JOURNAL_FSYNC) batch/journal/testdata/bench-journal.sh $(BENCH_JOURNAL_DOCS) $(BENCH_JOURNAL_BEFORE) \
	  | awk -f batch/journal/testdata/bench-journal.awk
