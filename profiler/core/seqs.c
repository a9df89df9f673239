/* Sequence numbers still in use, and the retirement of the map's tombstones
 * below them.
 *
 * Every unload leaves tombstones in the map (dead records, code tombstones,
 * history) so that an older item arriving late is refused; they are dropped
 * only by mdt_idmap_retire(map, below), whose caller promises that no event
 * with a seq under `below` will come any more. A long-running service that
 * loads and unloads (collectible contexts, dynamic methods) would otherwise
 * grow them without bound.
 *
 * A seq is in use from the moment an adapter's callback takes it until the
 * callback returns (and after, while the adapter keeps it for deferred work:
 * the adapter passes the oldest such seq as `floor`). Each taker publishes
 * its seq in one of MDP_SEQ_SLOTS slots, claimed with a compare-and-swap
 * (no lock, no thread-local storage: callbacks come from any runtime
 * thread, nested ones too); when every slot is taken the taker counts
 * itself in `seq_overflow` and retirement waits until that count is back
 * to 0.
 *
 * The race a watermark must not lose: a thread that has taken seq s but not
 * yet published it while the drain computes the watermark w > s. The taker
 * first marks its slot busy (MDP_SEQ_BUSY = 1: "some seq, not known yet")
 * and then takes the seq; the scanner first takes its own seq w, then reads
 * the slots, with a sequentially consistent fence between the two steps on
 * both sides. If the taker's seq came first (s < w), the scanner's read of
 * the slot sees the mark or s (the store-buffering pattern that the fences
 * forbid); a mark keeps the watermark at 1, which retires nothing. */
#include "config.h"

#include "core/base.h"
#include "core/lifetime.h"

#define MDP_SEQ_BUSY 1u

mdp_seq_hold mdp_seq_take(mdp_core *core)
{
    mdp_seq_hold h = {core, -1, 0};
    if (!core)
        return h;
    unsigned start = atomic_fetch_add_explicit(&core->life->seq_next_slot, 1, memory_order_relaxed);
    for (unsigned i = 0; i < MDP_SEQ_SLOTS; i++) {
        unsigned k = (start + i) % MDP_SEQ_SLOTS;
        uint64_t zero = 0;
        if (atomic_load_explicit(&core->life->seq_held[k], memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&core->life->seq_held[k], &zero, MDP_SEQ_BUSY)) {
            h.slot = (int)k;
            break;
        }
    }
    if (h.slot < 0)
        atomic_fetch_add(&core->life->seq_overflow, 1);
    atomic_thread_fence(memory_order_seq_cst);
    h.seq = mdp_seq(core);
    if (h.slot >= 0)
        atomic_store_explicit(&core->life->seq_held[h.slot], h.seq, memory_order_release);
    return h;
}

void mdp_seq_release(mdp_seq_hold *h)
{
    if (!h->core)
        return;
    if (h->slot >= 0)
        atomic_store_explicit(&h->core->life->seq_held[h->slot], 0, memory_order_release);
    else
        atomic_fetch_sub(&h->core->life->seq_overflow, 1);
    h->core = NULL;
}

uint64_t mdp_seq_watermark(mdp_core *core, uint64_t floor)
{
    uint64_t w = mdp_seq(core);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&core->life->seq_overflow))
        return MDP_SEQ_BUSY;
    if (floor && floor < w)
        w = floor;
    for (unsigned k = 0; k < MDP_SEQ_SLOTS; k++) {
        uint64_t s = atomic_load_explicit(&core->life->seq_held[k], memory_order_acquire);
        if (s && s < w)
            w = s;
    }
    return w;
}

/* Whether `since` unloads left enough tombstones to pay for rebuilding
 * the map's tables. A compiler's map holds ~10^5 live records (every
 * ReadyToRun method it runs) and unloads a few dynamic methods: one
 * rebuild after 10 s was a quarter of its drain thread's time (perf, a
 * `dotnet build`'s csc), for tombstones worth a few hundred bytes. A
 * rebuild is paid for when the tombstones (at least one per unload) are
 * an eighth of the live records or more: then a rebuild costs at most ~8
 * records' moves per unload, and tombstones never take more than an
 * eighth of the tables beside the live records (MDP_RETIRE_BATCH unloads
 * retire at once whatever the map's size). */
static int worth_retiring(mdp_core *core, uint64_t since)
{
    mdt_idmap_stats st;
    mdt_idmap_stats_get(&st, core->map);
    uint64_t live = st.modules_live + st.classes_live + st.functions_live;
    uint64_t dead = st.modules_dead + st.classes_dead + st.functions_dead;
    if (dead < since)
        dead = since; /* unloads of IDs without a record leave history */
    return dead >= live / 8;
}

int mdp_core_retire(mdp_core *core, uint64_t floor, int force)
{
    if (!core)
        return 0;
    /* A retirement rebuilds the map's tables (time in the number of live
     * records): only after unloads, in batches, or after a while. */
    uint64_t now = mdp_elapsed_ms(core);
    uint64_t unloads = atomic_load(&core->life->unloads);
    if (!force) {
        uint64_t since = unloads - core->life->retire_unloads;
        if (since == 0 ||
            (since < MDP_RETIRE_BATCH && now - core->life->retire_last_ms < MDP_RETIRE_MS))
            return 0;
        if (since < MDP_RETIRE_BATCH && !worth_retiring(core, since)) {
            core->life->retire_last_ms = now; /* look again after another while */
            return 0;
        }
    }
    uint64_t below = mdp_seq_watermark(core, floor);
    if (below <= core->life->retire_below)
        return 0; /* a callback older than the last watermark still runs */
    int r = mdt_idmap_retire(core->map, below);
    if (r < 0)
        return r;
    core->life->stat_retired += (uint64_t)r;
    core->life->retire_below = below;
    core->life->retire_last_ms = now;
    core->life->retire_unloads = unloads;
    return r;
}
