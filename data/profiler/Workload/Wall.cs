// The wall and idle modes (tests/profiler/wall.sh, issue 27): threads
// that spend the same wall time in four known states, for wall-clock mode
// (`mdprofile --mode wall`) to name each thread's state and share.
//
//   Workload wall OUT MS
//
// Four named threads live MS ms of wall time each, from the same start:
// Waiter in Monitor.Wait, Sleeper in Thread.Sleep, Reader blocked reading
// a pipe (read(2) through P/Invoke), Spinner running managed code. The
// main thread then pulses Waiter and writes a byte for Reader; Sleeper and
// Spinner end by themselves. Each says "# wall NAME TID START_MS END_MS"
// (its own gettid, monotonic ms around its state).
//
//   Workload idle OUT MS N
//
// N threads (1,000 in the test) wait in Monitor.Wait for MS ms, then are
// released: what wall mode costs for many idle threads. Says "# idle N"
// "# entered K": how many had taken the lock before the release (all,
// unprofiled) and "# early K": how often Monitor.Wait returned before it.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Mdp.Work
{
    public static class WallWork
    {
        [DllImport("libc.so.6", EntryPoint = "gettid")]
        static extern int GetTid();

        [DllImport("libc.so.6", EntryPoint = "pipe", SetLastError = true)]
        static extern int Pipe(int[] fds);

        [DllImport("libc.so.6", EntryPoint = "read", SetLastError = true)]
        static extern nint Read(int fd, byte[] buf, nint n);

        [DllImport("libc.so.6", EntryPoint = "write", SetLastError = true)]
        static extern nint Write(int fd, byte[] buf, nint n);

        [DllImport("libc.so.6", EntryPoint = "close")]
        static extern int Close(int fd);

        static readonly Stopwatch clock = Stopwatch.StartNew();
        static readonly object gate = new object();
        static bool released;
        static int early; // Monitor.Wait returned before the PulseAll
        static int entered; // threads that took the lock (under it)

        static void Say(string name, long start)
        {
            Names.Fact("wall", name + " " + GetTid() + " " + start + " " + clock.ElapsedMilliseconds);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Waiter()
        {
            long start = clock.ElapsedMilliseconds;
            lock (gate)
                while (!released)
                    Monitor.Wait(gate);
            Say("Waiter", start);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Sleeper(int ms)
        {
            long start = clock.ElapsedMilliseconds;
            Thread.Sleep(ms);
            Say("Sleeper", start);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Reader(int fd)
        {
            long start = clock.ElapsedMilliseconds;
            var buf = new byte[1];
            // read(2) restarts after the profiler's signal (SA_RESTART); a
            // return of -1 (EINTR, should it come) is read again
            while (Read(fd, buf, 1) < 0)
            {
            }
            Say("Reader", start);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long SpinUntil(long until)
        {
            long s = 1;
            while (clock.ElapsedMilliseconds < until)
                for (int i = 0; i < 20000; i++)
                    s = s * 6364136223846793005 + 1442695040888963407;
            return s;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Spinner(int ms)
        {
            long start = clock.ElapsedMilliseconds;
            SpinUntil(start + ms);
            Say("Spinner", start);
        }

        public static void Run(int ms)
        {
            Names.Fact("module", Names.Mvid(typeof(WallWork).Module));
            Names.Fact("corelib", Names.Mvid(typeof(object).Module));
            Names.NoteModule(typeof(WallWork).Module);
            Names.Fact("main", GetTid().ToString());
            var fds = new int[2];
            if (Pipe(fds) != 0)
                throw new InvalidOperationException("pipe: " + Marshal.GetLastWin32Error());
            var threads = new[]
            {
                new Thread(Waiter) { Name = "Waiter" },
                new Thread(() => Sleeper(ms)) { Name = "Sleeper" },
                new Thread(() => Reader(fds[0])) { Name = "Reader" },
                new Thread(() => Spinner(ms)) { Name = "Spinner" },
            };
            foreach (var t in threads)
                t.Start();
            Thread.Sleep(ms);
            lock (gate)
            {
                released = true;
                Monitor.PulseAll(gate);
            }
            Write(fds[1], new byte[] { 1 }, 1);
            foreach (var t in threads)
                t.Join();
            Close(fds[0]);
            Close(fds[1]);
            Console.WriteLine("wall done");
        }

        public static void Idle(int ms, int n)
        {
            var threads = new Thread[n];
            for (int i = 0; i < n; i++)
            {
                threads[i] = new Thread(() =>
                {
                    lock (gate)
                    {
                        entered++;
                        while (!released)
                        {
                            Monitor.Wait(gate);
                            if (!released)
                                Interlocked.Increment(ref early);
                        }
                    }
                }, 256 * 1024);
                threads[i].Start();
            }
            Thread.Sleep(ms);
            int inside;
            lock (gate)
            {
                inside = entered;
                released = true;
                Monitor.PulseAll(gate);
            }
            foreach (var t in threads)
                t.Join();
            Names.Fact("idle", n.ToString());
            Names.Fact("entered", inside.ToString());
            Names.Fact("early", early.ToString());
            Console.WriteLine("idle done");
        }
    }
}
