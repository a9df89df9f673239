// Everything.cs: one small assembly that fills as many ECMA-335 metadata
// tables as the Mono C# compiler (mcs) can emit. Built by data/build.sh:
//   mcs -target:library -unsafe -deterministic -keyfile:src/test.snk -nowarn:169
//       -resource:Everything.greeting.txt,Everything.greeting.txt
//       -out:Everything.dll src/Everything.cs
// The facts tests may rely on (row counts, tokens, names) are listed in
// data/README.md; regenerate them with data/facts.sh after editing this file.
using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Permissions;

[assembly: AssemblyVersion("1.2.3.4")]
[assembly: AssemblyFileVersion("1.2.3.4")]
[assembly: AssemblyCulture("")]
[assembly: AssemblyTitle("Everything")]
[assembly: InternalsVisibleTo("Friend, PublicKey=002400000480000094000000060200000024000052534131000400000100010077749e3d9d6408e76acb602229e049068f000cdecb35dc3720c6b4ec98ad05e25358966e29c3887b8d02253eedefa0fb64475a8dd5c8c5ae65b365cb14910ec6af2596019f1e3ceee6a99a2551985bf1331b812beb8607b49d9dee88755925f68ccfc578a6262cc1de3e491bbe5c2a2c543d696fb3d208981449696f16598fb0")]
[assembly: Everything.Info(1, "assembly", Everything.Color.Red, typeof(int), null, null)]
[module: Everything.Info(2, "module", Everything.Color.Green, typeof(void), new int[0], "boxed string")]

namespace Everything
{
    // ---- enums --------------------------------------------------------
    public enum Color : byte { Red = 1, Green = 2, Blue = 4 }

    [Flags]
    public enum Perms : long { None = 0, Read = 1, Write = 2, All = Read | Write, High = long.MinValue }

    // ---- a custom attribute with fixed and named arguments ------------
    [AttributeUsage(AttributeTargets.All, AllowMultiple = true)]
    public sealed class InfoAttribute : Attribute
    {
        public InfoAttribute() { }
        public InfoAttribute(int number, string text, Color color, Type kind, int[] values, object boxed) { }
        public int Number;
        public Type Kind;
        public object Boxed;
        public Color[] Colors;
        public string Text { get; set; }
    }

    // ---- delegates and interfaces ---------------------------------------
    public delegate int Transform(int x);

    public interface IShape
    {
        double Area();
        string Name { get; }
        event EventHandler Changed;
    }

    public interface IScalable<T> { void Scale(T factor); }
    public interface IProducer<out T> { T Produce(); }
    public interface IConsumer<in T> { void Consume(T item); }

    // ---- a class with explicit interface implementations (MethodImpl) --
    [Info(42, "hello", Color.Green, typeof(List<int>), new[] { 1, 2, 3 }, 7L,
          Number = -1, Text = "named", Kind = typeof(string[]), Boxed = Color.Blue,
          Colors = new[] { Color.Red, Color.Blue })]
    [Info(Boxed = typeof(Dictionary<,>))]
    [Serializable]
    public class Circle : IShape, IScalable<double>, IComparable<Circle>
    {
        private double radius;
        [NonSerialized] private EventHandler changed;

        public Circle(double radius) { this.radius = radius; }

        double IShape.Area() { return Math.PI * radius * radius; }
        string IShape.Name { get { return "circle"; } }
        event EventHandler IShape.Changed { add { changed += value; } remove { changed -= value; } }
        void IScalable<double>.Scale(double factor) { radius *= factor; }
        public int CompareTo(Circle other) { return radius.CompareTo(other.radius); }

        public virtual double Radius { get { return radius; } protected set { radius = value; } }
        public event EventHandler<EventArgs> Resized;
        protected void OnResized() { if (Resized != null) Resized(this, EventArgs.Empty); }

        public static Circle operator +(Circle a, Circle b) { return new Circle(a.radius + b.radius); }
        public static explicit operator double(Circle c) { return c.radius; }
        ~Circle() { }
    }

    public sealed class Ring : Circle
    {
        static Ring() { Count = 0; }
        public Ring() : base(1.0) { Count++; }
        public static int Count { get; private set; }
        public override double Radius { get { return base.Radius * 2; } }
    }

    public abstract class Animal
    {
        public abstract string Sound();
        internal virtual int Legs() { return 4; }
    }

    // ---- structs ------------------------------------------------------
    public struct Point
    {
        public int X, Y;
        public Point(int x, int y) { X = x; Y = y; }
        public override string ToString() { return X + "," + Y; }
    }

    [StructLayout(LayoutKind.Explicit, Size = 16)]
    public struct Union
    {
        [FieldOffset(0)] public int I;
        [FieldOffset(0)] public float F;
        [FieldOffset(8)] public long L;
    }

    [StructLayout(LayoutKind.Sequential, Size = 24, Pack = 4, CharSet = CharSet.Unicode)]
    public struct Packed
    {
        public byte A;
        public double B;
    }

    [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Ansi)]
    public struct NativeRecord
    {
        [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 32)] public string Name;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4, ArraySubType = UnmanagedType.I4)] public int[] Values;
        [MarshalAs(UnmanagedType.Bool)] public bool Flag;
        [MarshalAs(UnmanagedType.LPWStr)] public string Wide;
        [MarshalAs(UnmanagedType.Interface)] public object Unknown;
    }

    public unsafe struct FixedBuffer
    {
        public fixed byte Data[16];
        public int* Cursor;
    }

    // ---- fields of many primitive types --------------------------------
    public class Primitives
    {
        public bool Bool; public char Char;
        public sbyte I1; public byte U1;
        public short I2; public ushort U2;
        public int I4; public uint U4;
        public long I8; public ulong U8;
        public float R4; public double R8;
        public IntPtr I; public UIntPtr U;
        public string Str; public object Obj;
        public decimal Dec; public DateTime When;
        public int[] Vector; public int[,] Matrix; public int[][] Jagged;
        public int? Nullable;
        public List<KeyValuePair<string, int[]>> Nested;
        public Environment.SpecialFolder Folder;
        public static volatile int Volatile;
        protected internal readonly Guid Id;
        private static ThreadStaticHolder holder;
        private class ThreadStaticHolder { [ThreadStatic] public static int PerThread; }
    }

    // ---- constants of every primitive type, string and null ------------
    public static class Consts
    {
        public const bool Bool = true;
        public const char Char = 'x';
        public const sbyte I1 = -8;
        public const byte U1 = 200;
        public const short I2 = -1000;
        public const ushort U2 = 60000;
        public const int I4 = -100000;
        public const uint U4 = 4000000000;
        public const long I8 = long.MinValue;
        public const ulong U8 = ulong.MaxValue;
        public const float R4 = 1.5f;
        public const double R8 = -2.25;
        public const string Str = "const string";
        public const string Empty = "";
        public const string NullString = null;
        public const object Null = null;
        public const Color EnumConst = Color.Blue;
        public const decimal Dec = 12.34m;
        public static readonly decimal ReadOnlyDec = 79.99m;
        public static readonly int[] Primes = { 2, 3, 5, 7, 11, 13, 17, 19 };
        public static readonly long[] Big = { 1L, 1L << 40, -1L };
    }

    // ---- nested types, three levels below a top-level type ---------------
    public class Outer
    {
        public class Middle
        {
            public class Inner
            {
                public class Innermost { public int Depth = 3; }
            }
            protected internal struct MiddleStruct { }
        }
        private enum Hidden { A }
        public class Generic<T> { public class Leaf<U> { public T First; public U Second; } }
    }

    // ---- generics with every kind of constraint ------------------------
    public class Constrained<TClass, TStruct, TNew, TIface, TBase>
        where TClass : class
        where TStruct : struct
        where TNew : new()
        where TIface : IShape, IComparable<TIface>
        where TBase : Circle
    {
        public TClass C; public TStruct S; public TNew N; public TIface I; public TBase B;
        public TNew Make() { return new TNew(); }
    }

    public class Pair<TKey, TValue> : IProducer<KeyValuePair<TKey, TValue>>
        where TKey : IComparable<TKey>
    {
        public TKey Key; public TValue Value;
        public KeyValuePair<TKey, TValue> Produce() { return new KeyValuePair<TKey, TValue>(Key, Value); }
        public TResult Select<TResult>(Func<TKey, TValue, TResult> f) { return f(Key, Value); }
    }

    public static class GenericMethods
    {
        public static T Make<T>() where T : new() { return new T(); }
        public static void Swap<T>(ref T a, ref T b) { T t = a; a = b; b = t; }
        public static TOut Upcast<TIn, TOut>(TIn x) where TIn : class, TOut { return x; }
        public static TStruct Default<TStruct>() where TStruct : struct { return default(TStruct); }
        public static List<U> Map<T, U>(List<T> list, Func<T, U> f)
        {
            var r = new List<U>();
            foreach (var x in list) r.Add(f(x));
            return r;
        }
        public static int Use()
        {
            var p = Make<Point>();
            int a = 1, b = 2;
            Swap<int>(ref a, ref b);
            object o = Upcast<string, object>("s");
            var lens = Map<string, int>(new List<string> { "a", "bb" }, s => s.Length);
            var pair = new Pair<string, Circle>();
            return p.X + a + lens.Count + (o == null ? 0 : 1) + pair.Select<int>((k, v) => 0);
        }
    }

    // ---- properties, indexers, events -----------------------------------
    public class Bag
    {
        private readonly Dictionary<string, int> items = new Dictionary<string, int>();
        public int this[int index] { get { return index; } set { } }
        public int this[string key, int fallback] { get { int v; return items.TryGetValue(key, out v) ? v : fallback; } }
        public string Label { get; set; }
        public static int Instances { get; private set; }
        public event EventHandler Emptied;
        public event Transform Mapped { add { } remove { } }
        public class Slots { [IndexerName("Slot")] public object this[long i] { get { return null; } } }
        protected void Raise() { var h = Emptied; if (h != null) h(this, EventArgs.Empty); }
    }

    // ---- P/Invoke (ImplMap, FieldMarshal on params) and security ------
    public static class Native
    {
        [DllImport("libc", EntryPoint = "strlen", CharSet = CharSet.Ansi, CallingConvention = CallingConvention.Cdecl)]
        public static extern IntPtr StrLen([MarshalAs(UnmanagedType.LPStr)] string s);

        [DllImport("kernel32.dll", SetLastError = true, ExactSpelling = true, CallingConvention = CallingConvention.StdCall)]
        [return: MarshalAs(UnmanagedType.Bool)]
        public static extern bool Beep(uint frequency, uint duration);

        [DllImport("libc", EntryPoint = "getpid")]
        public static extern int GetPid();

        [SecurityPermission(SecurityAction.Demand, UnmanagedCode = true)]
        public static int Guarded() { return GetPid(); }
    }

    [SecurityPermission(SecurityAction.LinkDemand, Flags = SecurityPermissionFlag.Execution)]
    public class Secured { }

    // ---- parameters: out, ref, params, defaults, vararg ------------------
    public static class Calls
    {
        public static int Many(out int result, ref string text, params object[] rest)
        {
            result = rest.Length; text = text + "!"; return result;
        }

        public static string Defaults(int i = 5, string s = "def", Color c = Color.Blue, object o = null,
                                      double d = 1.25, decimal m = 1.5m, char ch = 'q', long big = -1L)
        {
            return s + i;
        }

        public static int Legacy([Optional] int optional, [Optional, DefaultParameterValue(7)] int legacy)
        {
            return optional + legacy;
        }

        public static int VarArgs(int n, __arglist)
        {
            var it = new ArgIterator(__arglist);
            return n + it.GetRemainingCount();
        }

        public static int CallVarArgs()
        {
            int o; string t = "x";
            return VarArgs(2, __arglist(1, "two")) + VarArgs(0, __arglist()) + Many(out o, ref t, 1, "a");
        }

        public static unsafe int* Pointers(int* p, void* v, byte** pp, ref int r)
        {
            fixed (int* q = &r) { *p = *q; }
            return p + 1;
        }

        public static unsafe int FirstChar(string s)
        {
            fixed (char* c = s) { return *c; }
        }

        public static int Sum(int[] values)
        {
            int s = 0;
            for (int i = 0; i < values.Length; i++) s += values[i];
            return s + Consts.Primes[0];
        }

        [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.Synchronized)]
        public static void Locked() { }

        [Obsolete("do not use", true)]
        [EditorBrowsable(EditorBrowsableState.Never)]
        public static void Old() { }

        internal static int Internal() { return 0; }
    }
}
