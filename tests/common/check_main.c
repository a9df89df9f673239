/* main() for Check-based unit tests: each test file provides suite(). */
#include <check.h>
#include <stdlib.h>

Suite *suite(void);

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
