/* `memberrefs`: every MemberRef of the current module, or of all open modules,
 * with where it resolves over the open modules (ECMA-335 II.22.25 MemberRef;
 * the rules of <mdtools/typeref.h>). */
#include "config.h"

#include <mdtools/tables.h>

#include "cmd.h"
#include "resolve.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return mdi_list_refs(st, MDT_TABLE_MemberRef, mdi_arg_of(argc, argv, 0) != NULL);
}

const mdi_cmd mdi_cmd_memberrefs = {
    .name = "memberrefs",
    .args = {MDI_FLAG_ALL("the MemberRefs of every open module")},
    .flags = MDI_CMD_IMAGE,
    .summary = "every MemberRef with the method or field it resolves to",
    .help = "Lists the MemberRef rows of the current module (of every open module\n"
            "with -a), each resolved over the open modules as `resolve` does:\n"
            "token, parent (the type, [module X] for a global, or the method of a\n"
            "vararg call site), name, signature (overloads differ there), result,\n"
            "the assembly and version that\n"
            "define the member (unresolved: that the parent asks for), the\n"
            "defining module and MethodDef or Field token, the tier and hops of\n"
            "the parent's resolution and the assemblies visited.\n",
    .run = run,
};
