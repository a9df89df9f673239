/* Lazy catch-up (the "Profiler Attach Part 2" post): on a miss, ask the
 * profiler's callback to query the runtime and feed the answer back, then
 * look again. Never reached from the signal-safe lookups; the callback runs
 * outside any reader section and without the writer mutex, so it may call
 * the writers (which may wait for readers). A thread-local depth keeps a
 * fetch made inside the callback from calling it again. */
#include "config.h"

#include "tokens/idmap_int.h"

static _Thread_local int depth;

static int call_miss(mdt_idmap *m, int kind, uintptr_t id)
{
    mdt_idmap_miss_fn fn;
    void *payload;
    pthread_mutex_lock(&m->lock);
    fn = m->miss;
    payload = m->miss_payload;
    pthread_mutex_unlock(&m->lock);
    if (!fn || depth > 0)
        return MDT_ENOTFOUND;
    depth++;
    int rc = fn(m, kind, id, payload);
    depth--;
    return rc;
}

int mdt_idmap_module_fetch(mdt_idmap *map, mdt_idmap_module_info *out, uintptr_t module_id)
{
    int rc = mdt_idmap_module_lookup(map, out, module_id, 0);
    if (rc == MDT_ENOTFOUND && call_miss(map, MDT_IDMAP_MODULE, module_id) == 0)
        rc = mdt_idmap_module_lookup(map, out, module_id, 0);
    return rc;
}

int mdt_idmap_class_fetch(mdt_idmap *map, mdt_idmap_class_info *out, uintptr_t *args_buf,
                          uint32_t args_cap, uintptr_t class_id)
{
    int rc = mdt_idmap_class_lookup(map, out, args_buf, args_cap, class_id, 0);
    if (rc == MDT_ENOTFOUND && call_miss(map, MDT_IDMAP_CLASS, class_id) == 0)
        rc = mdt_idmap_class_lookup(map, out, args_buf, args_cap, class_id, 0);
    return rc;
}

int mdt_idmap_function_fetch(mdt_idmap *map, mdt_idmap_function_info *out, uintptr_t *args_buf,
                             uint32_t args_cap, uintptr_t function_id)
{
    int rc = mdt_idmap_function_lookup(map, out, args_buf, args_cap, function_id, 0);
    if (rc == MDT_ENOTFOUND && call_miss(map, MDT_IDMAP_FUNCTION, function_id) == 0)
        rc = mdt_idmap_function_lookup(map, out, args_buf, args_cap, function_id, 0);
    return rc;
}

int mdt_idmap_ip_fetch(mdt_idmap *map, mdt_idmap_code_range *out, uintptr_t ip)
{
    int rc = mdt_idmap_ip_lookup(map, out, ip);
    if (rc == MDT_ENOTFOUND && call_miss(map, MDT_IDMAP_IP, ip) == 0)
        rc = mdt_idmap_ip_lookup(map, out, ip);
    return rc;
}
