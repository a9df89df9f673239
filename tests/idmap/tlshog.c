/* A shared library whose only content is an initial-exec TLS block of
 * HOG_BYTES bytes. glibc places such a block of a dlopen()ed library in
 * the static TLS surplus, and refuses to load the library once the surplus
 * is used up; sigtest_dl loads copies of these until that happens, to show
 * that libmdtools still loads and works after them (issue 16). */
#ifndef HOG_BYTES
#error "HOG_BYTES: the size of the TLS block"
#endif

__thread char mdt_tls_hog[HOG_BYTES] __attribute__((tls_model("initial-exec")));

char *mdt_tls_hog_at(void);
char *mdt_tls_hog_at(void)
{
    return mdt_tls_hog;
}
