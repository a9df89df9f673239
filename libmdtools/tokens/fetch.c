/* Lazy catch-up (the "Profiler Attach Part 2" post): on a miss, ask the
 * profiler's callback to query the runtime and feed the answer back, then
 * look again. Never reached from the signal-safe lookups; the callback runs
 * outside any reader section and without the writer mutex, so it may call
 * the writers (which may wait for readers). A thread-local depth keeps a
 * fetch made inside the callback from calling it again. A fetch on the
 * thread that holds the writer mutex (from an mdt_idmap_module_each()
 * callback) is refused: the mutex checks its owner (idm_lock). */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include "tokens/idmap_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

static _Thread_local int depth;

/* After a miss: 1 when the callback answered (look again), 0 when there is
 * none to ask, this is a fetch made inside it, or it failed (the miss
 * stands), MDT_EINVAL when this thread holds the writer mutex (a fetch
 * inside an mdt_idmap_module_each() callback: the callback's writer calls
 * could never lock it). */
static int call_miss(mdt_idmap *m, int kind, uintptr_t id)
{
    mdt_idmap_miss_fn fn;
    void *payload;
    int rc = idm_lock(m);
    if (rc)
        return rc;
    fn = m->miss;
    payload = m->miss_payload;
    idm_unlock(m);
    if (!fn || depth > 0)
        return 0;
    depth++;
    rc = fn(payload, m, kind, id);
    depth--;
    return rc == 0;
}

int mdt_idmap_module_fetch(mdt_idmap_module_info *out, mdt_idmap *map, uintptr_t module_id)
{
    int rc = mdt_idmap_module_lookup(out, map, module_id, 0), miss = 0;
    if (rc == MDT_ENOTFOUND && (miss = call_miss(map, MDT_IDMAP_MODULE, module_id)) == 1)
        rc = mdt_idmap_module_lookup(out, map, module_id, 0);
    return miss < 0 ? miss : rc;
}

int mdt_idmap_class_fetch(mdt_idmap_class_info *out, uintptr_t *args_buf, uint32_t args_cap,
                          mdt_idmap *map, uintptr_t class_id)
{
    int rc = mdt_idmap_class_lookup(out, args_buf, args_cap, map, class_id, 0), miss = 0;
    if (rc == MDT_ENOTFOUND && (miss = call_miss(map, MDT_IDMAP_CLASS, class_id)) == 1)
        rc = mdt_idmap_class_lookup(out, args_buf, args_cap, map, class_id, 0);
    return miss < 0 ? miss : rc;
}

int mdt_idmap_function_fetch(mdt_idmap_function_info *out, uintptr_t *args_buf, uint32_t args_cap,
                             mdt_idmap *map, uintptr_t function_id)
{
    int rc = mdt_idmap_function_lookup(out, args_buf, args_cap, map, function_id, 0), miss = 0;
    if (rc == MDT_ENOTFOUND && (miss = call_miss(map, MDT_IDMAP_FUNCTION, function_id)) == 1)
        rc = mdt_idmap_function_lookup(out, args_buf, args_cap, map, function_id, 0);
    return miss < 0 ? miss : rc;
}

int mdt_idmap_ip_fetch(mdt_idmap_code_range *out, mdt_idmap *map, uintptr_t ip)
{
    int rc = mdt_idmap_ip_lookup(out, map, ip), miss = 0;
    if (rc == MDT_ENOTFOUND && (miss = call_miss(map, MDT_IDMAP_IP, ip)) == 1)
        rc = mdt_idmap_ip_lookup(out, map, ip);
    return miss < 0 ? miss : rc;
}
