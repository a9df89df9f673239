// Plug-in B: same assembly name as A, other types and methods.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace Plugin
{
    public class Beta
    {
        public string Name = "beta";
    }

    public static class Gate<T>
    {
        public static bool Noted;
    }

    public class Cruncher<T>
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public long SpinBeta<U>(int n, Action<MethodBase, Type, string, Type[]> note)
        {
            if (!Gate<U>.Noted)
            {
                Gate<U>.Noted = true;
                note(MethodBase.GetCurrentMethod(), typeof(Cruncher<T>), "SpinBeta", new[] { typeof(U) });
            }
            long s = 1;
            for (int i = 0; i < n; i++)
                s = s * 31 + (i & 7);
            return s;
        }
    }

    public static class Entry
    {
        public static long Run(int ms, Action<MethodBase, Type, string, Type[]> note)
        {
            var c = new Cruncher<Beta>();
            var sw = System.Diagnostics.Stopwatch.StartNew();
            long t = 0;
            while (sw.ElapsedMilliseconds < ms)
                t += c.SpinBeta<int>(20000, note);
            return t;
        }
    }
}
