// The `throws` and `contention` modes (tests/profiler/throws.sh,
// contention.sh): events of known count and length, for mdprofile's
// exceptions and contention modes.
//
//   Workload throws OUT [N]       N*300 InvalidOperationException thrown by
//                                 Thrower.Fail, N*200 Oops<int> thrown by
//                                 Checker.Check<string>, each caught by its caller
//   Workload contention OUT [N]   Holder takes a lock N times (20) and holds
//                                 it until 50 ms after Waiter says it is about
//                                 to take it (so every take waits, however
//                                 late a loaded machine wakes Waiter)
//
// Facts: "# throw TYPE FRAME CALLER COUNT" (TYPE the exception class's
// descriptor, exact; FRAME the throwing method's log frame, CALLER the
// catching method's), "# wait FRAME CALLER COUNT MS" (the method that
// blocked in Monitor.Enter, its caller, how many times the waiter blocked
// and for how long in all, by the waiter's own stopwatch), "# waiter TID"
// (the waiting thread's kernel ID).
using System;
using System.Diagnostics;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Mdp.Work
{
    public sealed class Oops<T> : Exception
    {
        public Oops(string m) : base(m) { }
    }

    public static class Thrower
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Fail(int i)
        {
            throw new InvalidOperationException("fail " + i);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int RunA(int n)
        {
            int caught = 0;
            for (int i = 0; i < n; i++)
            {
                try
                {
                    Fail(i);
                }
                catch (InvalidOperationException)
                {
                    caught++;
                }
            }
            return caught;
        }
    }

    public static class Checker
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Check<T>(int i)
        {
            throw new Oops<int>("check " + i);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int RunB(int n)
        {
            int caught = 0;
            for (int i = 0; i < n; i++)
            {
                try
                {
                    Check<string>(i);
                }
                catch (Oops<int>)
                {
                    caught++;
                }
            }
            return caught;
        }
    }

    public static class EventsWork
    {
        static string Method(Type owner, string name, Type[] margs)
        {
            MethodInfo m = owner.GetMethod(name, BindingFlags.Public | BindingFlags.Static);
            return Names.Frame(m, owner, margs);
        }

        public static void Throws(int n)
        {
            int a = Thrower.RunA(300 * n), b = Checker.RunB(200 * n);
            Names.Fact("throw", Names.Desc(typeof(InvalidOperationException), false) + " " +
                                Method(typeof(Thrower), "Fail", null) + " " +
                                Method(typeof(Thrower), "RunA", null) + " " + a);
            Names.Fact("throw", Names.Desc(typeof(Oops<int>), false) + " " +
                                Method(typeof(Checker), "Check", new[] { typeof(string) }) + " " +
                                Method(typeof(Checker), "RunB", null) + " " + b);
            Console.WriteLine("throws done " + a + " " + b);
        }

        static readonly object Gate = new object();
        static readonly ManualResetEventSlim Held = new ManualResetEventSlim();
        static readonly ManualResetEventSlim Next = new ManualResetEventSlim();
        static long waitedTicks;
        static int waits, waiterTid, entering;

        [DllImport("libc.so.6", EntryPoint = "gettid")]
        static extern int GetTid();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Hold(int n)
        {
            for (int i = 0; i < n; i++)
            {
                Next.Wait();
                Next.Reset();
                lock (Gate)
                {
                    Held.Set();
                    // the 50 ms start once Waiter is at the lock: on a loaded
                    // machine it may wake later than any fixed head start
                    var sw = Stopwatch.StartNew();
                    while (Volatile.Read(ref entering) == 0 && sw.ElapsedMilliseconds < 10000)
                        Thread.Sleep(1);
                    Thread.Sleep(50);
                }
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Take()
        {
            // Holder holds Gate now: this blocks until it lets go
            long t0 = Stopwatch.GetTimestamp();
            Volatile.Write(ref entering, 1);
            lock (Gate)
            {
                waitedTicks += Stopwatch.GetTimestamp() - t0;
                waits++;
                entering = 0;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Wait(int n)
        {
            waiterTid = GetTid();
            for (int i = 0; i < n; i++)
            {
                Next.Set();
                Held.Wait();
                Held.Reset();
                Take(); // Holder holds Gate until 50 ms after Take says it is there
            }
        }

        public static void Contention(int n)
        {
            var holder = new Thread(() => Hold(n)) { Name = "Holder" };
            var waiter = new Thread(() => Wait(n)) { Name = "Waiter" };
            holder.Start();
            waiter.Start();
            holder.Join();
            waiter.Join();
            double ms = waitedTicks * 1000.0 / Stopwatch.Frequency;
            Names.Fact("wait", Method(typeof(EventsWork), "Take", null) + " " +
                               Method(typeof(EventsWork), "Wait", null) + " " + waits + " " +
                               ((long)ms).ToString());
            Names.Fact("waiter", waiterTid.ToString());
            Console.WriteLine("contention done " + waits + " " + (long)ms);
        }
    }
}
