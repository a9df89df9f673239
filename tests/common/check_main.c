/* main() for Check-based unit tests: each test file provides suite(), and
 * may provide suite_requires(): a file the tests read from a Debian
 * package (the Mono framework) and the package's name. Without that file
 * the program runs nothing and exits 77, which `make check` reports as a
 * skip (and tests/summary.sh, for CI, as a failure). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

Suite *suite(void);
const char *suite_requires(const char **package);

/* Overridden by a test file that needs a file from outside the tree. */
__attribute__((weak)) const char *suite_requires(const char **package)
{
    *package = NULL;
    return NULL;
}

int main(void)
{
    const char *package = NULL, *need = suite_requires(&package);
    if (need && access(need, R_OK) != 0) {
        fprintf(stderr, "skipped: %s is not there (Debian package %s)\n", need,
                package ? package : "?");
        return 77;
    }
    SRunner *sr = srunner_create(suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
