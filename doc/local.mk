# doc: the manual pages of the library, libmdtools(3) and one page per
# public header (included from Makefile.am). doc/man3/check.sh, run by
# `make check` through doc/man-check.sh, keeps them equal to the headers: every public function in
# some page's SYNOPSIS with its prototype, every page lint-clean. A new
# public header gets a page here and a line below.
MDT_MAN3_PAGES = \
	doc/man3/libmdtools.3 \
	doc/man3/mdt_errors.3 \
	doc/man3/mdt_file.3 \
	doc/man3/mdt_token.3 \
	doc/man3/mdt_image.3 \
	doc/man3/mdt_tables.3 \
	doc/man3/mdt_heaps.3 \
	doc/man3/mdt_members.3 \
	doc/man3/mdt_assembly.3 \
	doc/man3/mdt_sig.3 \
	doc/man3/mdt_names.3 \
	doc/man3/mdt_descriptor.3 \
	doc/man3/mdt_value.3 \
	doc/man3/mdt_attr.3 \
	doc/man3/mdt_modset.3 \
	doc/man3/mdt_typeref.3 \
	doc/man3/mdt_idmap.3 \
	doc/man3/mdt_pdb.3 \
	doc/man3/mdt_il.3 \
	doc/man3/mdt_pe.3 \
	doc/man3/mdt_strongname.3 \
	doc/man3/mdt_resources.3 \
	doc/man3/mdt_bundle.3
dist_man_MANS += $(MDT_MAN3_PAGES)
# doc/man-check.sh is the one check of the manual pages: its parts are
# doc/man3/check.sh (the library's pages), tests/cli/man-check.sh
# (mdinspect(1)) and tests/profiler/man-check.sh (mdprofile(1)).
check_SCRIPTS += doc/man-check.sh
TESTS += doc/man-check.sh
EXTRA_DIST += doc/man-check.sh doc/man3/check.sh doc/man3/links.sh

# `man mdt_image_open_file` for every function: FUNCTION.3 is a ".so" link
# to the page whose NAME lists it (doc/man3/links.sh, which check.sh
# verifies against the headers).
install-data-hook: install-man3-links
uninstall-hook: uninstall-man3-links
install-man3-links:
	@pages=; for p in $(MDT_MAN3_PAGES); do pages="$$pages $(srcdir)/$$p"; done; \
	$(SHELL) $(srcdir)/doc/man3/links.sh $$pages | while read fn page; do \
	  printf '.so man3/%s.3\n' "$$page" > "$(DESTDIR)$(man3dir)/$$fn.3" || exit 1; \
	done
uninstall-man3-links:
	@pages=; for p in $(MDT_MAN3_PAGES); do pages="$$pages $(srcdir)/$$p"; done; \
	$(SHELL) $(srcdir)/doc/man3/links.sh $$pages | while read fn page; do \
	  rm -f "$(DESTDIR)$(man3dir)/$$fn.3"; \
	done
.PHONY: install-man3-links uninstall-man3-links
