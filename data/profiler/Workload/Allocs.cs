// The allocstacks and heap modes (tests/profiler/allocstacks.sh,
// heap.sh; issue 27): allocations of known sizes from known methods, and a
// heap that keeps a known number of objects alive across gen2 GCs.
//
//   Workload allocstacks OUT [ROUNDS]
//
// Each round, AllocA.Make allocates 3 byte arrays of 1,000 elements and
// AllocB.Make 1 (so A allocates 3x B's bytes of System.Byte[]), interleaved
// (a fixed sampling interval would alias with the pattern); Payloads.Make
// allocates 12 small Payload objects (a class of three fields). The facts
// say, per (type, method), the objects each allocated and the size of one:
// "# allocated TYPE METHOD OBJECTS BYTES_EACH" (names in the full style of
// doc/names.md), then "# rounds N".
//
//   Workload heap OUT [N]
//
// Keeps N Retained objects (a class of two fields) alive in an array,
// then runs three gen2 GCs while allocating garbage (Payloads) between
// them, 400 ms apart (the profiler walks the heap a few ms after a gen2
// GC); after the last, it says "# retained Mdp.Work.Retained N" and the
// GCs' count ("# gen2 K").
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Mdp.Work
{
    public sealed class Payload
    {
        public long A, B, C;
    }

    public sealed class Retained
    {
        public long Id;
        public object Next;
    }

    public static class AllocA
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Make(byte[][] keep, int at)
        {
            for (int i = 0; i < 3; i++)
                keep[(at + i) & (keep.Length - 1)] = new byte[1000];
            return 3;
        }
    }

    public static class AllocB
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Make(byte[][] keep, int at)
        {
            keep[at & (keep.Length - 1)] = new byte[1000];
            return 1;
        }
    }

    public static class Payloads
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Make(Payload[] keep, int at)
        {
            for (int i = 0; i < 12; i++)
                keep[(at + i) & (keep.Length - 1)] = new Payload { A = i };
            return 12;
        }
    }

    public static class AllocsWork
    {
        static int Size(Type t, int elements)
        {
            // an array's size on 64-bit CoreCLR: header and method table
            // (16), length (8), the elements, rounded up to 8; a class's:
            // 16 and its fields, at least 24
            if (t == typeof(byte[]))
                return (16 + 8 + elements + 7) & ~7;
            return Math.Max(24, 16 + 3 * 8);
        }

        public static void Stacks(int rounds)
        {
            var arrays = new byte[1024][];
            var payloads = new Payload[4096];
            long a = 0, b = 0, p = 0;
            for (int r = 0; r < rounds; r++)
            {
                a += AllocA.Make(arrays, (int)a);
                b += AllocB.Make(arrays, (int)(a + b));
                p += Payloads.Make(payloads, (int)p);
            }
            GC.KeepAlive(arrays);
            GC.KeepAlive(payloads);
            Names.Fact("allocated", "System.Byte[] Mdp.Work.AllocA::Make " + a + " " + Size(typeof(byte[]), 1000));
            Names.Fact("allocated", "System.Byte[] Mdp.Work.AllocB::Make " + b + " " + Size(typeof(byte[]), 1000));
            Names.Fact("allocated", "Mdp.Work.Payload Mdp.Work.Payloads::Make " + p + " " + Size(typeof(Payload), 0));
            Names.Fact("rounds", rounds.ToString());
            Console.WriteLine("allocstacks done");
        }

        public static void Heap(int n)
        {
            var keep = new Retained[n];
            for (int i = 0; i < n; i++)
                keep[i] = new Retained { Id = i };
            var garbage = new Payload[4096];
            int gen2 = GC.CollectionCount(2);
            for (int g = 0; g < 3; g++)
            {
                for (int i = 0; i < 200000; i++)
                    garbage[i & 4095] = new Payload { A = i };
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
                // the profiler walks the heap on its drain thread shortly
                // after a gen2 GC (a later one before the walk takes its turn)
                Thread.Sleep(400);
            }
            GC.KeepAlive(keep);
            Names.Fact("retained", "Mdp.Work.Retained " + n);
            Names.Fact("gen2", (GC.CollectionCount(2) - gen2).ToString());
            Console.WriteLine("heap done");
        }
    }
}
