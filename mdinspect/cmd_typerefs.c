/* `typerefs`: every TypeRef of the current module, or of all open modules,
 * with where it resolves over the open modules (ECMA-335 II.22.38 TypeRef;
 * the rules of <mdtools/typeref.h>). */
#include "config.h"

#include <mdtools/tables.h>

#include "cmd.h"
#include "resolve.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return mdi_list_refs(st, MDT_TABLE_TypeRef, mdi_arg_of(argc, argv, 0) != NULL);
}

const mdi_cmd mdi_cmd_typerefs = {
    .name = "typerefs",
    .args = {MDI_FLAG_ALL("the TypeRefs of every open module")},
    .flags = MDI_CMD_IMAGE,
    .summary = "every TypeRef with where it resolves over the open modules",
    .help = "Lists the TypeRef rows of the current module (of every open module\n"
            "with -a), each resolved over the open modules as `resolve` does:\n"
            "token, scope ([Name] for an AssemblyRef, the enclosing type of a\n"
            "nested reference, [module X] for a ModuleRef, [this module], nil),\n"
            "name, result (resolved or the reason it is not), the assembly and\n"
            "version that define it (unresolved: that it asks for), the defining\n"
            "module and token, the binding tier, the forwarder hops and the\n"
            "assemblies visited.\n",
    .run = run,
};
