// The profiler's test program (data/profiler/README.md). Each mode runs a
// workload and writes what the profiler should find to OUT: one line per
// method instantiation it ran ("mvid 0xTOKEN name", Names.cs) and facts
// ("# key value...").
//
//   Workload names OUT [MS]     generics, nesting, framework calls, two threads, tiering
//   Workload plugins OUT A B    two collectible AssemblyLoadContexts in turn
//   Workload calls OUT          exact call counts
//   Workload alloc OUT          exact allocation counts
//   Workload wait OUT STOP      the names workload until the file STOP exists,
//                               saying "ready PID" once it has run a second of CPU time (attach)
//   Workload tree PREFIX N MS   a tree of N+1 processes, each profiled (Lifecycle.cs)
//   Workload signal OUT         the names workload until a signal ends it (Lifecycle.cs)
//   Workload bench N [clock]    CPU-bound work of fixed size; prints its wall time
//                               (clock: reads its CPU clock after each call)
//   Workload reflect OUT FRAMES DIR...  reflection's names of a log's frames (Resolve.cs)
//   Workload gc|jit|memmove|exceptions OUT [MS]  CPU time in native code (Native.cs)
//   Workload threads OUT [MS]   named and unnamed threads of known CPU time (Threads.cs)
//   Workload wall OUT [MS]      threads waiting, sleeping, reading a pipe, spinning (Wall.cs)
//   Workload idle OUT [MS [N]]  N threads waiting in Monitor.Wait (Wall.cs)
//   Workload throws OUT [N]     exceptions of two types from two sites (Events.cs)
//   Workload contention OUT [N] one thread waits on a lock another holds (Events.cs)
//   Workload allocstacks OUT [ROUNDS]  allocations of known sizes from known methods (Allocs.cs)
//   Workload heap OUT [N]       N objects kept alive across gen2 GCs (Allocs.cs)
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Loader;
using System.Threading;

namespace Mdp.Work
{
    public struct Point
    {
        public int X, Y;
    }

    public sealed class Node
    {
        public int V;
        public Node Next;
    }

    public static class Gate<T>
    {
        public static bool Noted;
    }

    // The constructors' own gates (Gate<Gen<T>.Plain> is Plain.Run's).
    public static class Made<T>
    {
        public static bool Noted;
    }

    public class Gen<T>
    {
        public T Held;

        // Round constructs every class it calls into, and a constructor is
        // a method that runs (sampled now and then, or at tier 0 often:
        // nothing is inlined there), shared over reference types like the
        // rest: so it names itself as it runs, like the methods below.
        public Gen()
        {
            if (!Made<Gen<T>>.Noted)
            {
                Made<Gen<T>>.Noted = true;
                Names.Note(MethodBase.GetCurrentMethod(), typeof(Gen<T>), ".ctor", null);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public long Work<U>(int n)
        {
            if (!Gate<(Gen<T>, U)>.Noted)
            {
                Gate<(Gen<T>, U)>.Noted = true;
                Names.Note(MethodBase.GetCurrentMethod(), typeof(Gen<T>), "Work", new[] { typeof(U) });
            }
            long s = 0;
            for (int i = 0; i < n; i++)
                s += (i * 31 ^ s) & 0xff;
            return s;
        }

        public class Inner<V>
        {
            public Inner()
            {
                if (!Made<Inner<V>>.Noted)
                {
                    Made<Inner<V>>.Noted = true;
                    Names.Note(MethodBase.GetCurrentMethod(), typeof(Gen<T>.Inner<V>), ".ctor", null);
                }
            }

            [MethodImpl(MethodImplOptions.NoInlining)]
            public long Deep<W>(int n)
            {
                if (!Gate<(Inner<V>, W)>.Noted)
                {
                    Gate<(Inner<V>, W)>.Noted = true;
                    Names.Note(MethodBase.GetCurrentMethod(), typeof(Gen<T>.Inner<V>), "Deep", new[] { typeof(W) });
                }
                long s = 7;
                for (int i = 0; i < n; i++)
                    s = (s << 1) ^ (s >> 5) ^ i;
                return s;
            }
        }

        // A class nested in a generic class without parameters of its own
        // still has Gen's: Gen+Plain<T>.
        public class Plain
        {
            public Plain()
            {
                if (!Made<Plain>.Noted)
                {
                    Made<Plain>.Noted = true;
                    Names.Note(MethodBase.GetCurrentMethod(), typeof(Gen<T>.Plain), ".ctor", null);
                }
            }

            [MethodImpl(MethodImplOptions.NoInlining)]
            public long Run(int n)
            {
                if (!Gate<Plain>.Noted)
                {
                    Gate<Plain>.Noted = true;
                    Names.Note(MethodBase.GetCurrentMethod(), typeof(Gen<T>.Plain), "Run", null);
                }
                long s = 11;
                for (int i = 0; i < n; i++)
                    s = s * 7 + (i >> 1);
                return s;
            }
        }
    }

    // A generic struct's generic method: shared code over a reference type
    // runs as Pair<__Canon>.
    public struct Pair<T>
    {
        public T First;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public long Mix<U>(int n)
        {
            if (!Gate<(Pair<T>, U, byte)>.Noted)
            {
                Gate<(Pair<T>, U, byte)>.Noted = true;
                Names.Note(MethodBase.GetCurrentMethod(), typeof(Pair<T>), "Mix", new[] { typeof(U) });
            }
            long s = 5;
            for (int i = 0; i < n; i++)
                s += (s ^ i) >> 2;
            return s;
        }
    }

    public sealed class PointOrder : IComparer<Point>
    {
        public static readonly PointOrder Instance = new PointOrder();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Compare(Point a, Point b)
        {
            if (!Gate<PointOrder>.Noted)
            {
                Gate<PointOrder>.Noted = true;
                Names.Note(MethodBase.GetCurrentMethod(), typeof(PointOrder), "Compare", null);
            }
            int c = a.X.CompareTo(b.X);
            return c != 0 ? c : a.Y.CompareTo(b.Y);
        }
    }

    public static class Counted
    {
        public static long Sink;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Hit() => Sink++;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Hit<T>() => Sink += 2;

        // How methods are left other than by returning. Throw is left by its
        // exception, Pass by the exception of the method it called (its
        // finally runs), while Rescue catches its own and returns.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Throw(int i)
        {
            if (i >= 0)
                throw new InvalidOperationException("counted");
            Sink++;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Pass(int i)
        {
            try
            {
                Throw(i);
            }
            finally
            {
                Sink++;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Rescue(int i)
        {
            try
            {
                if (i >= 0)
                    throw new InvalidOperationException("rescued");
            }
            catch (InvalidOperationException)
            {
                Sink++;
            }
        }

        // Forward ends in a call whose arguments fit its own: optimized from
        // the start, it jumps to Target instead of calling it (a tail call),
        // and Target returns straight to Forward's caller. Not NoInlining:
        // the runtime lets no method marked so make an implicit tail call
        // (it would vanish from stack traces); its caller is not optimized,
        // so it is not inlined either.
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        public static long Forward(long x) => Target(x + 1);

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Target(long x) => x * 3 + Sink;
    }

    public static class Program
    {
        static volatile bool stop;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Spin(int n)
        {
            if (!Gate<Point>.Noted)
            {
                Gate<Point>.Noted = true;
                Names.Note(MethodBase.GetCurrentMethod(), typeof(Program), "Spin", null);
            }
            long s = 0;
            for (int i = 0; i < n; i++)
                s += i % 7;
            return s;
        }

        // A leaf that needs no frame of its own: its caller must still show.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Leaf(int n)
        {
            long s = 3;
            for (int i = 0; i < n; i++)
                s ^= s * 5 + i;
            return s;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Mid(int n) => Leaf(n) + 1;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long SortPoints(Point[] pts, int seed)
        {
            var rnd = new Random(seed);
            for (int i = 0; i < pts.Length; i++)
                pts[i] = new Point { X = rnd.Next(1000), Y = rnd.Next(1000) };
            // List<Point>.Sort: framework code (System.Private.CoreLib, reached
            // through the System.Runtime facade's type forwarders) over a type
            // of this module.
            var list = new List<Point>(pts);
            list.Sort(PointOrder.Instance);
            // System.Linq, another framework assembly.
            return list[0].X + pts.Select(p => (long)p.Y).Sum();
        }

        [StructLayout(LayoutKind.Sequential)]
        struct Timespec
        {
            public long Sec, Nsec;
        }

        [DllImport("libc.so.6", EntryPoint = "clock_gettime")]
        static extern int ClockGetTime(int clock, out Timespec ts);

        const int CLOCK_THREAD_CPUTIME_ID = 3;

        static long ThreadCpuNs()
        {
            ClockGetTime(CLOCK_THREAD_CPUTIME_ID, out Timespec ts);
            return ts.Sec * 1000000000 + ts.Nsec;
        }

        // The thread CPU time each case of Round runs for; 0: each case once
        // (bench: a fixed amount of work).
        static long sliceNs;

        // bench N clock: each case still once, but the thread's CPU clock
        // read after every call as the sliced rounds do (a system call
        // every 20-40 us: such a thread's CPU-time timer comes seldom on a
        // busy machine, bench/profiler/sparse.sh).
        static bool benchClock;

        // Whether the case that started at `mark` (thread CPU time) goes on;
        // when its slice is over, the next one starts now.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static bool More(ref long mark)
        {
            if (sliceNs == 0)
            {
                if (benchClock)
                    mark ^= ThreadCpuNs() & 1;
                return false;
            }
            long now = ThreadCpuNs();
            if (now - mark < sliceNs)
                return true;
            mark = now;
            return false;
        }

        // One round of every case; n scales the work of one call. With a
        // slice, every case runs for the same CPU time, whatever the tier of
        // its code: counted in calls, the cases still at tier 0 or in OSR
        // code took most of the time and those tiered up little (on a busy
        // machine, where the tiering thread waits, 1-2% of the samples for
        // some, and in one run of five none). The slice (20 ms) holds several
        // of the kernel's ticks, at which CPU-time signals arrive (4 ms at
        // 250 Hz): a slice near a tick would alias with it and leave cases
        // unsampled round after round.
        static long Round(int n)
        {
            long t = 0, mark = sliceNs == 0 ? 0 : ThreadCpuNs();
            do t += new Gen<int>().Work<string>(n); while (More(ref mark));            // Gen<Int32>::Work<__Canon>
            do t += new Gen<string>().Work<int>(n); while (More(ref mark));            // Gen<__Canon>::Work<Int32>
            do t += new Gen<string>().Work<string>(n); while (More(ref mark));         // fully shared
            do t += new Gen<long>().Work<double>(n); while (More(ref mark));           // exact, value types
            do t += new Gen<Point>().Work<List<string>>(n); while (More(ref mark));    // Gen<Point>::Work<__Canon>
            do t += new Gen<KeyValuePair<string, int>>().Work<int>(n); while (More(ref mark)); // value type over a reference
            do t += new Gen<int>.Inner<string>().Deep<Point>(n); while (More(ref mark));        // nested generic
            do t += new Gen<Point[]>.Inner<long>().Deep<KeyValuePair<int, string>>(n); while (More(ref mark));
            do t += new Gen<int?>().Work<Point?>(n); while (More(ref mark));           // Nullable<T> arguments
            do t += new Gen<int>.Plain().Run(n); while (More(ref mark));               // Gen+Plain<Int32>::Run
            do t += new Gen<string>.Plain().Run(n); while (More(ref mark));            // Gen+Plain<__Canon>::Run
            do t += new Pair<string>().Mix<int>(n); while (More(ref mark));            // Pair<__Canon>::Mix<Int32>
            do t += Spin(n); while (More(ref mark));
            do t += Mid(n); while (More(ref mark));
            do t += SortPoints(new Point[n / 50 + 16], n); while (More(ref mark));
            return t;
        }

        static void Worker()
        {
            long t = 0;
            while (!stop)
            {
                t += new Gen<string>().Work<string>(20000);
                t += Spin(20000);
            }
            GC.KeepAlive(t);
        }

        static void Facts()
        {
            Names.Fact("module", Names.Mvid(typeof(Program).Module));
            Names.Fact("corelib", Names.Mvid(typeof(object).Module));
            Names.Fact("linq", Names.Mvid(typeof(Enumerable).Module));
            Names.NoteModule(typeof(Program).Module);
        }

        // Two threads, every case, long enough for tier-1 re-JIT (30 calls,
        // then the tiering delay) and on-stack replacement of loops: rounds
        // while more(wall ms, CPU ms of the process) says so, and at least
        // six: the first holds most JIT compilations, each later one 20 ms
        // of CPU time per case, so that every case has had 100 ms of it,
        // some 25 of the kernel's ticks, at which the profiler's signals
        // come (a time limit alone left some cases 2 or 3 on a busy machine).
        static void RunNames(Func<long, double, bool> more)
        {
            Facts();
            sliceNs = 20000000;
            int rounds = 0;
            var w = new Thread(Worker) { Name = "worker" };
            w.Start();
            var sw = Stopwatch.StartNew();
            var me = Process.GetCurrentProcess();
            TimeSpan cpu0 = me.TotalProcessorTime;
            long t = 0;
            while (rounds < 6 || more(sw.ElapsedMilliseconds, (me.TotalProcessorTime - cpu0).TotalMilliseconds))
            {
                t += Round(20000);
                rounds++;
                me.Refresh();
            }
            stop = true;
            w.Join();
            Console.WriteLine("names done " + t);
        }

        // At least `ms` of wall time and `ms` of the process's CPU time, so
        // a busy machine does not starve the profile of samples.
        static void Names_(int ms) => RunNames((wall, cpu) => wall < ms || cpu < ms);

        // The same for Lifecycle.cs.
        internal static void NamesFor(int ms) => Names_(ms);
        internal static void RunNamesWhile(Func<long, double, bool> more) => RunNames(more);

        // For attach: say "ready PID" once the process has run a second of
        // CPU time in the workload (it has JIT-compiled, and mostly tiered
        // up, what it will), then run on until the file `stopFile` exists:
        // the test ends the run when the attached profiler has written its
        // log, whatever the machine's load made of the wall time.
        static void Wait(string stopFile)
        {
            bool ready = false;
            RunNames((wall, cpu) =>
            {
                if (!ready && cpu >= 1000)
                {
                    ready = true;
                    Console.WriteLine("ready " + Environment.ProcessId);
                    Console.Out.Flush();
                }
                return !ready || !File.Exists(stopFile);
            });
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static WeakReference RunPlugin(string dir, string label, int ms)
        {
            var alc = new AssemblyLoadContext("plugin" + label, isCollectible: true);
            Assembly asm = alc.LoadFromAssemblyPath(Path.Combine(Path.GetFullPath(dir), "Plugin.dll"));
            Names.Fact("plugin", label + " " + Names.Mvid(asm.ManifestModule));
            Names.NoteModule(asm.ManifestModule);
            MethodInfo run = asm.GetType("Plugin.Entry").GetMethod("Run");
            var note = new Action<MethodBase, Type, string, Type[]>(Names.Note);
            TimeSpan cpu0 = Process.GetCurrentProcess().TotalProcessorTime;
            object r = run.Invoke(null, new object[] { ms, note });
            TimeSpan cpu1 = Process.GetCurrentProcess().TotalProcessorTime;
            Names.Fact("cpu", label + " " + (int)(cpu1 - cpu0).TotalMilliseconds);
            GC.KeepAlive(r);
            alc.Unload();
            return new WeakReference(alc);
        }

        static void Plugins(string a, string b)
        {
            Facts();
            foreach (var (dir, label) in new[] { (a, "A"), (b, "B") })
            {
                WeakReference wr = RunPlugin(dir, label, 600);
                for (int i = 0; i < 200 && wr.IsAlive; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    Thread.Sleep(5);
                }
                Names.Fact("unloaded", label + " " + (wr.IsAlive ? "no" : "yes"));
            }
            Console.WriteLine("plugins done");
        }

        // Exact counts of enters and of the three ways out: "# calls FRAME
        // NAME ENTERS LEAVES TAILCALLS UNWINDS". Not optimized, so that no
        // OSR version of it inlines what it counts.
        [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
        static void Calls()
        {
            Facts();
            const int plain = 100003, ints = 20011, strings = 30011;
            const int passed = 1009, rescued = 1013, forwarded = 10007;
            for (int i = 0; i < plain; i++)
                Counted.Hit();
            for (int i = 0; i < ints; i++)
                Counted.Hit<int>();
            for (int i = 0; i < strings; i++)
                Counted.Hit<string>();
            for (int i = 0; i < passed; i++)
            {
                try
                {
                    Counted.Pass(i);
                }
                catch (InvalidOperationException)
                {
                }
            }
            for (int i = 0; i < rescued; i++)
                Counted.Rescue(i);
            long f = 0;
            for (int i = 0; i < forwarded; i++)
                f += Counted.Forward(i);
            Type c = typeof(Counted);
            MethodInfo hit = c.GetMethods().First(m => m.Name == "Hit" && !m.IsGenericMethodDefinition);
            MethodInfo hitT = c.GetMethods().First(m => m.Name == "Hit" && m.IsGenericMethodDefinition);
            void Counts(MethodBase m, Type owner, string name, Type[] args, int enters, int leaves, int tails,
                        int unwinds)
            {
                Names.Note(m, owner, name, args);
                Names.Fact("calls", Names.Frame(m, owner, args) + " " + Names.Method(owner, name, args) + " " +
                                    enters + " " + leaves + " " + tails + " " + unwinds);
            }
            Counts(hit, c, "Hit", null, plain, plain, 0, 0);
            Counts(hitT, c, "Hit", new[] { typeof(int) }, ints, ints, 0, 0);
            Counts(hitT, c, "Hit", new[] { typeof(string) }, strings, strings, 0, 0);
            Counts(c.GetMethod("Pass"), c, "Pass", null, passed, 0, 0, passed);
            Counts(c.GetMethod("Throw"), c, "Throw", null, passed, 0, 0, passed);
            Counts(c.GetMethod("Rescue"), c, "Rescue", null, rescued, rescued, 0, 0);
            Counts(c.GetMethod("Forward"), c, "Forward", null, forwarded, 0, forwarded, 0);
            Counts(c.GetMethod("Target"), c, "Target", null, forwarded, forwarded, 0, 0);
            // this method caught every exception Pass let through: it was
            // not unwound, and it returns
            Counts(MethodBase.GetCurrentMethod(), typeof(Program), "Calls", null, 1, 1, 0, 0);
            Console.WriteLine("calls done " + Counted.Sink + " " + f);
        }

        static unsafe void Alloc()
        {
            Facts();
            const int nodes = 10007, points = 5003, gens = 3001, genints = 2003;
            const int grids = 1009, cubes = 503, pairs = 401, inners = 307;
            var keepNodes = new Node[nodes];
            for (int i = 0; i < nodes; i++)
                keepNodes[i] = new Node { V = i };
            var keepPoints = new Point[points][];
            for (int i = 0; i < points; i++)
                keepPoints[i] = new Point[4];
            var keepGens = new Gen<string>[gens];
            for (int i = 0; i < gens; i++)
                keepGens[i] = new Gen<string>();
            var keepGenInts = new Gen<int>[genints];
            for (int i = 0; i < genints; i++)
                keepGenInts[i] = new Gen<int>();
            // arrays of rank 2 and 3, an array of a value type over a
            // reference type, a nested generic class
            var keepGrids = new int[grids][,];
            for (int i = 0; i < grids; i++)
                keepGrids[i] = new int[2, 3];
            var keepCubes = new Point[cubes][,,];
            for (int i = 0; i < cubes; i++)
                keepCubes[i] = new Point[1, 2, 2];
            var keepPairs = new KeyValuePair<string, int>[pairs][];
            for (int i = 0; i < pairs; i++)
                keepPairs[i] = new KeyValuePair<string, int>[2];
            var keepInners = new Gen<int>.Inner<string>[inners];
            for (int i = 0; i < inners; i++)
                keepInners[i] = new Gen<int>.Inner<string>();
            // arrays of pointers and of function pointers: the profiling API
            // says a pointer type is composite and not what it points to, so
            // the profiler cannot describe them and counts them as
            // unknown:nomvid (doc/profile-log.md)
            const int ptrs = 7, fnptrs = 5;
            var keepPtrs = new object[ptrs + fnptrs];
            for (int i = 0; i < ptrs; i++)
                keepPtrs[i] = new int*[2];
            for (int i = 0; i < fnptrs; i++)
                keepPtrs[ptrs + i] = new delegate*<int, void>[2];
            Names.Fact("undescribed", (ptrs + fnptrs).ToString());
            foreach (var (t, n) in new[] { (typeof(Node), nodes), (typeof(Point[]), points),
                                           (typeof(int[,]), grids), (typeof(Point[,,]), cubes),
                                           (typeof(KeyValuePair<string, int>[]), pairs),
                                           (typeof(Gen<int>.Inner<string>), inners),
                                           (typeof(Gen<string>), gens), (typeof(Gen<int>), genints),
                                           (typeof(Node[]), 1), (typeof(Point[][]), 1),
                                           (typeof(Gen<string>[]), 1) })
                Names.Fact("alloc", Names.Desc(t, false) + " " + Names.Exact(t) + " " + n);
            GC.KeepAlive(keepNodes);
            GC.KeepAlive(keepPoints);
            GC.KeepAlive(keepGens);
            GC.KeepAlive(keepGenInts);
            GC.KeepAlive(keepGrids);
            GC.KeepAlive(keepCubes);
            GC.KeepAlive(keepPairs);
            GC.KeepAlive(keepInners);
            GC.KeepAlive(keepPtrs);
            Console.WriteLine("alloc done");
        }

        static void Bench(int n)
        {
            var sw = Stopwatch.StartNew();
            long t = 0;
            for (int i = 0; i < n; i++)
                t += Round(20000);
            Console.WriteLine("bench " + sw.ElapsedMilliseconds + " ms " + t);
        }

        public static int Main(string[] args)
        {
            if (args.Length < 2)
            {
                Console.Error.WriteLine("usage: Workload names|plugins|calls|alloc|wait|tree|signal|bench|reflect|gc|jit|memmove|exceptions|threads|wall|idle|throws|contention|allocstacks|heap ...");
                return 2;
            }
            string mode = args[0], output = args[1];
            switch (mode)
            {
                case "names":
                    Names_(args.Length > 2 ? int.Parse(args[2]) : 2500);
                    break;
                case "plugins":
                    Plugins(args[2], args[3]);
                    break;
                case "calls":
                    Calls();
                    break;
                case "alloc":
                    Alloc();
                    break;
                case "tree":
                    return Lifecycle.Tree(args[1], int.Parse(args[2]), int.Parse(args[3]));
                case "signal":
                    Lifecycle.Signal(args[1], args.Length > 2 && args[2] == "cancel");
                    return 0;
                case "wait":
                    Wait(args[2]);
                    break;
                case "bench":
                    benchClock = args.Length > 2 && args[2] == "clock";
                    Bench(int.Parse(output));
                    return 0;
                case "reflect":
                    return Resolve.Run(output, args[2], args.Skip(3).ToArray());
                case "gc":
                case "jit":
                case "memmove":
                case "exceptions":
                    NativeWork.Run(mode, args.Length > 2 ? int.Parse(args[2]) : 2000);
                    break;
                case "threads":
                    ThreadsWork.Run(args.Length > 2 ? int.Parse(args[2]) : 600);
                    break;
                case "wall":
                    WallWork.Run(args.Length > 2 ? int.Parse(args[2]) : 3000);
                    break;
                case "idle":
                    WallWork.Idle(args.Length > 2 ? int.Parse(args[2]) : 3000,
                                  args.Length > 3 ? int.Parse(args[3]) : 1000);
                    break;
                case "throws":
                    EventsWork.Throws(args.Length > 2 ? int.Parse(args[2]) : 1);
                    break;
                case "contention":
                    EventsWork.Contention(args.Length > 2 ? int.Parse(args[2]) : 20);
                    break;
                case "allocstacks":
                    AllocsWork.Stacks(args.Length > 2 ? int.Parse(args[2]) : 20000);
                    break;
                case "heap":
                    AllocsWork.Heap(args.Length > 2 ? int.Parse(args[2]) : 50000);
                    break;
                default:
                    Console.Error.WriteLine("unknown mode " + mode);
                    return 2;
            }
            Names.Write(output);
            return 0;
        }
    }
}
