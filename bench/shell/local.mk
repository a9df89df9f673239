# bench/shell: mdinspect's module-set benchmark (included from Makefile.am).
# `make bench-shell` opens the Mono 4.5 framework as one set, lists every
# type, and compares with monodis; results in bench/shell/README.md.
EXTRA_DIST += bench/shell/run.sh bench/shell/speed.sh bench/shell/README.md bench/il/run.sh bench/il/README.md

bench-shell: mdinspect/mdinspect$(EXEEXT)
	$(SHELL) $(top_srcdir)/bench/shell/run.sh $(abs_top_builddir)
.PHONY: bench-shell

# bench/il: `make bench-il` times il -a against ILDasm and monodis (CPU
# time, interleaved rounds); results in bench/il/README.md.
bench-il: mdinspect/mdinspect$(EXEEXT)
	$(SHELL) $(top_srcdir)/bench/il/run.sh $(abs_top_builddir)
.PHONY: bench-il
