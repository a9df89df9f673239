/* TEMPORARY, until the diagnostics-IPC client of branch `attach` is merged
 * (profiler/attach/ipc.h, written by another engineer): the one function
 * mdprofile --attach needs, with that header's exact contract. Delete this
 * file and ipc_stub.c then, and include "attach/ipc.h" instead. */
#ifndef MDP_IPC_STUB_H
#define MDP_IPC_STUB_H

#include <stddef.h>
#include <stdint.h>

/* Ask the runtime of process `pid` (diagnostics IPC, AttachProfiler
 * command) to load the profiler at `profiler_path` with CLSID `clsid`
 * (text form "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}"), passing
 * `client_data` (may be NULL/0) to InitializeForAttach. Waits up to
 * timeout_ms. Returns 0 when the runtime accepted (its HRESULT in
 * *hresult), or a negative MDT_E... code with a message naming the cause. */
int mdp_ipc_attach(int pid, const char *clsid, const char *profiler_path,
                   const void *client_data, uint32_t client_data_len,
                   uint32_t timeout_ms, uint32_t *hresult, char *err, size_t errlen);

#endif
