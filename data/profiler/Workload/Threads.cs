// The threads mode (tests/profiler/threads.sh, issue 27): threads named
// and unnamed that burn known amounts of their own CPU time, one of them
// only after two seconds, so that a log's records can be checked thread by
// thread (format 4: each record says its thread and time slice).
//
//   Workload threads OUT MS
//
// Worker-A burns 2 x MS ms of its CPU time, Worker-B MS ms, an unnamed
// thread MS ms, all three at once from the start; Late sleeps 2.3 s of
// wall time, then burns MS / 2 ms. Each counts its own CPU time
// (CLOCK_THREAD_CPUTIME_ID), so the shares hold on a busy machine. The
// facts say, per thread: "# thread NAME TID CPU_MS START_MS" (NAME "-" for
// the unnamed one; START_MS its first burn, in ms since the process
// started), and the main thread's TID.
using System;
using System.Diagnostics;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Mdp.Work
{
    public static class ThreadsWork
    {
        [StructLayout(LayoutKind.Sequential)]
        struct Timespec
        {
            public long Sec, Nsec;
        }

        [DllImport("libc.so.6", EntryPoint = "clock_gettime")]
        static extern int ClockGetTime(int clock, out Timespec ts);

        [DllImport("libc.so.6", EntryPoint = "gettid")]
        static extern int GetTid();

        const int CLOCK_THREAD_CPUTIME_ID = 3;

        static double ThreadCpuMs()
        {
            ClockGetTime(CLOCK_THREAD_CPUTIME_ID, out Timespec ts);
            return ts.Sec * 1000.0 + ts.Nsec / 1e6;
        }

        static double SinceStartMs() =>
            (DateTime.Now - Process.GetCurrentProcess().StartTime).TotalMilliseconds;

        // The work itself: a loop that checks the thread's CPU clock now and
        // then, until it has run ms of it.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Burn(double ms)
        {
            double end = ThreadCpuMs() + ms;
            long s = 1;
            while (ThreadCpuMs() < end)
                for (int i = 0; i < 20000; i++)
                    s = s * 6364136223846793005 + 1442695040888963407;
            return s;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Worker(string name, double ms, int sleepMs)
        {
            if (sleepMs > 0)
                Thread.Sleep(sleepMs);
            double start = SinceStartMs();
            double cpu0 = ThreadCpuMs();
            Burn(ms);
            Names.Fact("thread", (name ?? "-") + " " + GetTid() + " " +
                       Math.Round(ThreadCpuMs() - cpu0) + " " + Math.Round(start));
        }

        public static void Run(int ms)
        {
            Names.Fact("module", Names.Mvid(typeof(ThreadsWork).Module));
            Names.Fact("corelib", Names.Mvid(typeof(object).Module));
            Names.NoteModule(typeof(ThreadsWork).Module);
            Names.Fact("main", GetTid().ToString());
            var threads = new[]
            {
                new Thread(() => Worker("Worker-A", 2 * ms, 0)) { Name = "Worker-A" },
                new Thread(() => Worker("Worker-B", ms, 0)) { Name = "Worker-B" },
                new Thread(() => Worker(null, ms, 0)),
                new Thread(() => Worker("Late", ms / 2, 2300)) { Name = "Late" },
            };
            foreach (var t in threads)
                t.Start();
            foreach (var t in threads)
                t.Join();
            Console.WriteLine("threads done");
        }
    }
}
