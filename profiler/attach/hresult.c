/* Names and explanations of the HRESULTs a runtime answers an attach or a
 * process query with: the diagnostics server's codes (ipc-protocol.md,
 * "Errors"; ds-types.h), the profiler attach codes of corerror.h
 * (CORPROF_E_*) and the few COM codes the loader passes through. The values
 * are facts of the published ABI; the texts are ours, written for users. */
#include "config.h"

#include <stddef.h>

#include "ipc_int.h"

static const struct {
    uint32_t hr;
    const char *name;
    const char *text;
} known[] = {
    {0x00000000u, "S_OK", "success"},
    {0x80004001u, "E_NOTIMPL", "not implemented"},
    {0x80004002u, "E_NOINTERFACE",
     "the profiler does not implement an interface the runtime needs"},
    {0x80004005u, "E_FAIL", "unspecified failure (the runtime's log may say more)"},
    {0x8000FFFFu, "E_UNEXPECTED", "unexpected failure in the runtime"},
    {0x80040111u, "CLASS_E_CLASSNOTAVAILABLE",
     "the profiler library does not provide a class with this CLSID"},
    {0x80070002u, "HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)", "the profiler library was not found"},
    {0x8007000Eu, "E_OUTOFMEMORY", "out of memory"},
    {0x80070057u, "E_INVALIDARG", "invalid argument"},
    {0x8007007Au, "HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER)", "insufficient buffer"},
    {0x8007007Eu, "HRESULT_FROM_WIN32(ERROR_MOD_NOT_FOUND)",
     "the profiler library could not be loaded (missing file or dependency)"},
    {0x800000CBu, "DS_IPC_E_ENVVAR_NOT_FOUND", "environment variable not found"},
    {0x8013135Bu, "CORPROF_E_NOT_YET_AVAILABLE",
     "the runtime is not running yet (suspended at startup?)"},
    {0x80131367u, "CORPROF_E_PROFILER_DETACHING", "a profiler is detaching"},
    {0x80131368u, "CORPROF_E_PROFILER_NOT_ATTACHABLE",
     "the profiler does not support attach (no ICorProfilerCallback3, or it refused)"},
    {0x80131369u, "CORPROF_E_UNRECOGNIZED_PIPE_MSG_FORMAT", "unrecognized attach message"},
    {0x8013136Au, "CORPROF_E_PROFILER_ALREADY_ACTIVE",
     "a profiler is already loaded in this process"},
    {0x8013136Bu, "CORPROF_E_PROFILEE_INCOMPATIBLE_WITH_TRIGGER",
     "the target runtime's version is incompatible with the request"},
    {0x8013136Cu, "CORPROF_E_IPC_FAILED", "communication with the target failed"},
    {0x8013136Du, "CORPROF_E_PROFILEE_PROCESS_NOT_FOUND", "target process not found"},
    {0x8013136Eu, "CORPROF_E_CALLBACK3_REQUIRED",
     "the profiler must implement ICorProfilerCallback3 to attach"},
    {0x80131371u, "CORPROF_E_RUNTIME_UNINITIALIZED",
     "the runtime is not fully initialized yet; retry later"},
    {0x80131375u, "CORPROF_E_PROFILER_CANCEL_ACTIVATION",
     "the profiler asked not to be loaded (its InitializeForAttach failed)"},
    {0x80131379u, "CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC",
     "timed out waiting for a background GC to finish; retry or raise the timeout"},
    {0x80131384u, "CORDIAGIPC_E_BAD_ENCODING", "the runtime could not decode the request"},
    {0x80131385u, "CORDIAGIPC_E_UNKNOWN_COMMAND", "the runtime does not know this command"},
    {0x80131386u, "CORDIAGIPC_E_UNKNOWN_MAGIC", "the runtime does not speak this protocol version"},
    {0x80131387u, "CORDIAGIPC_E_UNKNOWN_ERROR", "unknown error in the diagnostics server"},
    {0x80131515u, "COR_E_NOTSUPPORTED",
     "the runtime does not support this command (built without it)"},
};

static const char *lookup(uint32_t hr, bool want_name)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].hr == hr)
            return want_name ? known[i].name : known[i].text;
    return NULL;
}

const char *mdp_ipc_hresult_name(uint32_t hr)
{
    return lookup(hr, true);
}

const char *mdp_ipc_hresult_text(uint32_t hr)
{
    return lookup(hr, false);
}
