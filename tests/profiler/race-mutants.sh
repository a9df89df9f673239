# The mutants of run-race-tsan.sh --mutants (sourced by it): each breaks one
# ordering or check of the core that the race tests stand for, and must be
# caught (a broken invariant or a ThreadSanitizer report).
# mutant NAME FILE TEST SED-EXPRESSION

# seqs.c: a taker that found every slot taken no longer stops retirement;
# the hog's 64 slots released, the others' overflowed holds are the oldest
# and the watermark passes them (the scanner sees a live hold below it)
mutant seqs-overflow-ignored seqs.c race_seqs \
    's/if (atomic_load(&core->life->seq_overflow))/if (0)/'
# seqs.c: a slot marked "taking" (1) is skipped by the scan: a taker that
# has its seq but has not stored it yet is missed
mutant seqs-taking-ignored seqs.c race_seqs \
    's/if (s && s < w)/if (s > MDP_SEQ_BUSY \&\& s < w)/'
# seqs.c: the seq taken before the slot is marked: the same window, wider
mutant seqs-seq-before-mark seqs.c race_seqs \
    's/mdp_seq_hold h = {core, -1, 0};/mdp_seq_hold h = {core, -1, mdp_seq(core)};/; /^    h\.seq = mdp_seq(core);$/d'
# ring.h: the consumer reads head without acquire: the frames it reads are
# not ordered after the producer's writes (TSan: a data race on the ring)
mutant ring-avail-relaxed ring.h race_drain \
    '/mdp_ring_avail/,/^}/ s/memory_order_acquire/memory_order_relaxed/'
# ring.h: the producer publishes head without release (the same race)
mutant ring-publish-relaxed ring.h race_drain \
    '/mdp_ring_publish/,/^}/ s/memory_order_release/memory_order_relaxed/'
# ring.h: the producer reads tail without acquire: it may overwrite words
# the drain is still reading
mutant ring-space-relaxed ring.h race_drain \
    '/mdp_ring_space/,/^}/ s/memory_order_acquire/memory_order_relaxed/'
# drain.c: a wake that bumps the word but wakes no waiter: a drain waiting
# out its period is not woken (a write asked for waits the 10 s period)
mutant drain-wake-lost state.c race_drain \
    '/^void mdp_drain_wake/,/^}/ s/^    syscall(SYS_futex.*$/    (void)0;/'
# core.c: the end without its last drain: what the rings hold is lost
mutant finish-without-drain core.c race_drain \
    '/^int mdp_core_finish/,/^}/ s/^    mdp_drain_all(core);$/    (void)0;/'
