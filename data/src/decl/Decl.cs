// Decl.cs: generic declarations with every kind of constraint, for the
// declarations of mdinspect's `type`/`token` in each naming style (issue
// 26) and for `derived`. Built with the .NET SDK's compiler (Roslyn:
// `allows ref struct` is C# 13, `unmanaged` C# 7.3; Mono's mcs has
// neither) by data/build-decl.sh. Facts about it are in data/README.md.
using System;
using System.Collections;
using System.Collections.Generic;

namespace Decl
{
    // Variance: `in` (contravariant, -) and `out` (covariant, +).
    public interface IConverter<in TIn, out TOut>
    {
        TOut Convert(TIn value);
    }

    public interface IShape
    {
        double Area();
    }

    // An interface constraint naming the parameter itself (!0 in the blob).
    public interface IOrdered<T> where T : IOrdered<T>
    {
        int Rank(T other);
    }

    // Every special constraint on a type's parameters.
    public class Holder<TClass, TStruct, TNew, TRef, TUnmanaged, TShape>
        where TClass : class
        where TStruct : struct
        where TNew : new()
        where TRef : allows ref struct
        where TUnmanaged : unmanaged
        where TShape : class, IShape, IComparable<TShape>, new()
    {
        public TClass Value;

        // Method-level constraints, as a method and in a method's signature.
        public static T As<T>(object o) where T : class => (T)o;

        public TOut Map<TOut, TKey>(TKey key, Func<TKey, TOut> f)
            where TOut : struct, IEquatable<TOut>
            where TKey : notnull, IOrdered<TKey>
            => f(key);

        public static int Size<T>() where T : unmanaged => 0;

        public static void Span<T>(T value) where T : allows ref struct { }
    }

    // Interfaces of a generic type that name its parameters.
    public class Ordered<T> : IOrdered<Ordered<T>>, IEnumerable<T>, IConverter<T, string>
        where T : IComparable<T>
    {
        public int Rank(Ordered<T> other) => 0;
        public IEnumerator<T> GetEnumerator() => null;
        IEnumerator IEnumerable.GetEnumerator() => null;
        public string Convert(T value) => null;
    }

    // A hierarchy for `derived`: classes, generic instantiations of a
    // base, interfaces implemented directly and through a base.
    public abstract class Shape : IShape
    {
        public abstract double Area();
    }

    public class Circle : Shape
    {
        public override double Area() => 3.0;
    }

    public sealed class Unit : Circle { }

    public class Square : Shape, IComparable<Square>
    {
        public override double Area() => 1.0;
        public int CompareTo(Square other) => 0;
    }

    public class Box<T> : IShape
    {
        public double Area() => 0;
    }

    public class IntBox : Box<int> { }

    public class NestedBox : Box<Box<string>> { }

    public struct Point : IEquatable<Point>, IOrdered<Point>
    {
        public bool Equals(Point other) => true;
        public int Rank(Point other) => 0;
    }

    public class Outer<T>
    {
        public class Inner : Box<T> { }
    }

    public class Stringer : IConverter<object, string>
    {
        public string Convert(object value) => null;
    }
}
