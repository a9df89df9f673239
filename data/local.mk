# data: build and test rules (included from Makefile.am).
