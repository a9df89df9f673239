# doc: the manual pages of the library, libmdtools(3) and one page per
# public header (included from Makefile.am). doc/man3/check.sh, run by
# `make check`, keeps them equal to the headers: every public function in
# some page's SYNOPSIS with its prototype, every page lint-clean. A new
# public header gets a page here and a line below.
dist_man_MANS += \
	doc/man3/mdt_errors.3 \
	doc/man3/mdt_image.3 \
	doc/man3/mdt_tables.3 \
	doc/man3/mdt_heaps.3 \
	doc/man3/mdt_assembly.3 \
	doc/man3/mdt_sig.3 \
	doc/man3/mdt_names.3 \
	doc/man3/mdt_descriptor.3 \
	doc/man3/mdt_value.3 \
	doc/man3/mdt_attr.3 \
	doc/man3/mdt_modset.3 \
	doc/man3/mdt_typeref.3
