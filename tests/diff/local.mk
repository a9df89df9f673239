# tests/diff: build and test rules (included from Makefile.am).
