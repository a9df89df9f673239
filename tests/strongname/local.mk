# tests/strongname: strong-name verification against Mono's sn -v, tampered
# copies, the .NET shared framework and SHA-2 re-signed copies (included
# from Makefile.am).
check_SCRIPTS += tests/strongname/sn-diff.sh
TESTS += tests/strongname/sn-diff.sh
EXTRA_DIST += tests/strongname/sn-diff.sh tests/strongname/resign.py
