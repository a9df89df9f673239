/* A single-producer single-consumer ring of 64-bit words: the producer is a
 * thread's sampling signal handler, the consumer the drain thread. The
 * producer reserves, writes, then publishes with one release store of
 * `head`; the consumer reads up to an acquire load of `head` and frees with a
 * release store of `tail`. No lock, no allocation, no system call: every
 * function here is async-signal-safe. The buffer is allocated before the
 * ring is used (mdp_ring_init) and outlives every producer. */
#ifndef MDP_RING_H
#define MDP_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mdp_ring {
    _Atomic uint64_t head; /* words ever written (producer) */
    _Atomic uint64_t tail; /* words ever consumed (consumer) */
    uint64_t *buf;
    uint64_t mask; /* capacity - 1, capacity a power of two */
} mdp_ring;

/* `words` must be a power of two; buf holds that many. */
static inline void mdp_ring_init(mdp_ring *r, uint64_t *buf, uint64_t words)
{
    atomic_store_explicit(&r->head, 0, memory_order_relaxed);
    atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
    r->buf = buf;
    r->mask = words - 1;
}

/* Producer: free words now. */
static inline uint64_t mdp_ring_space(mdp_ring *r)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    return r->mask + 1 - (h - t);
}

/* Producer: word `i` past the current head (not yet visible). */
static inline void mdp_ring_put(mdp_ring *r, uint64_t i, uint64_t w)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    r->buf[(h + i) & r->mask] = w;
}

/* Producer: make n words visible. */
static inline void mdp_ring_publish(mdp_ring *r, uint64_t n)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, h + n, memory_order_release);
}

/* Consumer: words available. */
static inline uint64_t mdp_ring_avail(mdp_ring *r)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return h - t;
}

/* Consumer: word `i` past the tail. */
static inline uint64_t mdp_ring_peek(mdp_ring *r, uint64_t i)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return r->buf[(t + i) & r->mask];
}

/* Consumer: release n words. */
static inline void mdp_ring_consume(mdp_ring *r, uint64_t n)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, t + n, memory_order_release);
}

#endif
