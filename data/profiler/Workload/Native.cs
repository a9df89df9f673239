// Workloads that spend their CPU time in native code (tests/profiler/native.sh,
// issue 24): the garbage collector, the JIT compiler, libc's memmove, the
// runtime's exception dispatch. Each runs for MS milliseconds of the
// process's CPU time and names every method of the module (Names.NoteModule),
// so that every managed frame of the log is checked as in the names mode.
//
//   Workload gc OUT MS          allocation churn: a large graph of small objects
//                               whose slots are replaced at random (old-to-young
//                               references, so every GC scans cards and promotes)
//   Workload jit OUT MS         DynamicMethods of a few hundred IL instructions
//                               each, made and called once (optimized JIT)
//   Workload memmove OUT MS     Array.Copy of 32 MiB arrays (libc's memmove)
//   Workload exceptions OUT MS  exceptions thrown through ten frames and caught
using System;
using System.Diagnostics;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;

namespace Mdp.Work
{
    public static class NativeWork
    {
        public sealed class Cell
        {
            public Cell Next;
            public long Value;
            public object Extra;
        }

        static Cell[] live;

        public static void Run(string mode, int ms)
        {
            Names.Fact("module", Names.Mvid(typeof(NativeWork).Module));
            Names.Fact("corelib", Names.Mvid(typeof(object).Module));
            Names.NoteModule(typeof(NativeWork).Module);
            Process me = Process.GetCurrentProcess();
            TimeSpan cpu0 = me.TotalProcessorTime;
            long sum = 0;
            int rounds = 0;
            while (rounds < 3 || (me.TotalProcessorTime - cpu0).TotalMilliseconds < ms)
            {
                switch (mode)
                {
                    case "gc": sum += Churn(200000); break;
                    case "jit": sum += Compile(20); break;
                    case "memmove": sum += Copy(8); break;
                    case "exceptions": sum += Throw(2000); break;
                    default: throw new ArgumentException("unknown mode " + mode);
                }
                rounds++;
                me.Refresh();
            }
            Names.Fact("rounds", rounds.ToString());
            Console.WriteLine(mode + " done " + sum);
        }

        // n replacements in a graph of a million cells: each new cell points
        // at an old one and is stored into an old slot.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Churn(int n)
        {
            if (live == null)
            {
                live = new Cell[1 << 20];
                for (int i = 0; i < live.Length; i++)
                    live[i] = new Cell { Value = i };
            }
            long s = 0;
            uint x = 2463534242;
            for (int i = 0; i < n; i++)
            {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                int at = (int)(x & (uint)(live.Length - 1));
                Cell c = new Cell { Next = live[(at + 1) & (live.Length - 1)], Value = i };
                if ((i & 7) == 0)
                    c.Extra = new byte[64];
                live[at] = c;
                s += c.Next.Value;
            }
            return s;
        }

        static int methods;

        // n dynamic methods, each a few hundred IL instructions of arithmetic
        // on its argument in a loop, made and called once: every one is
        // compiled (optimized: dynamic methods are not tiered).
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Compile(int n)
        {
            long s = 0;
            for (int k = 0; k < n; k++)
            {
                int id = methods++;
                var dm = new DynamicMethod("dyn" + id, typeof(long), new[] { typeof(long) },
                                           typeof(NativeWork).Module, true);
                ILGenerator il = dm.GetILGenerator();
                LocalBuilder acc = il.DeclareLocal(typeof(long));
                LocalBuilder i = il.DeclareLocal(typeof(int));
                Label top = il.DefineLabel(), test = il.DefineLabel();
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Stloc, acc);
                il.Emit(OpCodes.Ldc_I4_0);
                il.Emit(OpCodes.Stloc, i);
                il.Emit(OpCodes.Br, test);
                il.MarkLabel(top);
                for (int j = 0; j < 120; j++)
                {
                    il.Emit(OpCodes.Ldloc, acc);
                    il.Emit(OpCodes.Ldc_I8, (long)(id * 131 + j * 7 + 1));
                    il.Emit((j % 3) == 0 ? OpCodes.Add : (j % 3) == 1 ? OpCodes.Xor : OpCodes.Mul);
                    il.Emit(OpCodes.Stloc, acc);
                }
                il.Emit(OpCodes.Ldloc, i);
                il.Emit(OpCodes.Ldc_I4_1);
                il.Emit(OpCodes.Add);
                il.Emit(OpCodes.Stloc, i);
                il.MarkLabel(test);
                il.Emit(OpCodes.Ldloc, i);
                il.Emit(OpCodes.Ldc_I4_2);
                il.Emit(OpCodes.Blt, top);
                il.Emit(OpCodes.Ldloc, acc);
                il.Emit(OpCodes.Ret);
                var f = (Func<long, long>)dm.CreateDelegate(typeof(Func<long, long>));
                s += f(k);
            }
            return s;
        }

        static byte[] src, dst;

        // n copies of 32 MiB: Array.Copy hands large blocks to the runtime's
        // memmove, which is libc's.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Copy(int n)
        {
            if (src == null)
            {
                src = new byte[32 << 20];
                dst = new byte[32 << 20];
                for (int i = 0; i < src.Length; i += 4096)
                    src[i] = (byte)i;
            }
            long s = 0;
            for (int i = 0; i < n; i++)
            {
                Array.Copy(src, (i & 1) * 64, dst, 0, src.Length - 64);
                s += dst[4096];
            }
            return s;
        }

        // n exceptions thrown ten frames down and caught here.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Throw(int n)
        {
            long s = 0;
            for (int i = 0; i < n; i++)
            {
                try
                {
                    s += Down(10, i);
                }
                catch (InvalidOperationException e)
                {
                    s += e.HResult & 1;
                }
            }
            return s;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Down(int depth, int i)
        {
            if (depth == 0)
                throw new InvalidOperationException("down " + i);
            return Down(depth - 1, i) + 1;
        }
    }
}
