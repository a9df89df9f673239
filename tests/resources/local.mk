# tests/resources: manifest resources and the System.Resources format
# (mdinspect resources, <mdtools/resources.h>; included from Makefile.am).
# extract.sh: `resources -x` on the fixture and on copies with hostile
# names; resources-diff.sh: extraction against monodis --mresources and
# resource sets against Mono's ResourceReader over Mono's 4.5 libraries
# and the .NET shared framework.
check_SCRIPTS += tests/resources/extract.sh tests/resources/resources-diff.sh
TESTS += tests/resources/extract.sh tests/resources/resources-diff.sh
EXTRA_DIST += tests/resources/extract.sh tests/resources/resources-diff.sh
