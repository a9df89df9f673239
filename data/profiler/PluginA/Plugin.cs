// Plug-in A: the entry point the host finds by name, and a generic worker
// over a type of its own (so its frames carry its own MVID in descriptors).
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace Plugin
{
    public struct Alpha
    {
        public int Value;
    }

    public static class Gate<T>
    {
        public static bool Noted;
    }

    public class Worker<T>
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public long SpinAlpha(int n, Action<MethodBase, Type, string, Type[]> note)
        {
            if (!Gate<T>.Noted)
            {
                Gate<T>.Noted = true;
                note(MethodBase.GetCurrentMethod(), typeof(Worker<T>), "SpinAlpha", Type.EmptyTypes);
            }
            long s = 0;
            for (int i = 0; i < n; i++)
                s += (i ^ (s >> 3)) % 13;
            return s;
        }
    }

    public static class Entry
    {
        // Runs for `ms` milliseconds of wall time.
        public static long Run(int ms, Action<MethodBase, Type, string, Type[]> note)
        {
            var w = new Worker<Alpha>();
            var sw = System.Diagnostics.Stopwatch.StartNew();
            long t = 0;
            while (sw.ElapsedMilliseconds < ms)
                t += w.SpinAlpha(20000, note);
            return t;
        }
    }
}
