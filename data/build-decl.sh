#!/bin/sh
# build-decl.sh: rebuild data/decl/Decl.dll from data/src/decl/Decl.cs with
# the .NET SDK's C# compiler (Roslyn): the fixture's constraints
# (`allows ref struct`, `unmanaged`, `notnull`) are C# that Mono's mcs
# does not compile. build.sh runs it when `dotnet` is installed.
#
#   data/build-decl.sh            rebuild into data/decl/ (overwrites the committed file)
#   data/build-decl.sh --verify   rebuild into a scratch directory and compare
#
# A Release build, deterministic, without debug information, so the
# output is reproducible with the same SDK.
set -eu

DATA=$(cd "$(dirname "$0")" && pwd)
VERIFY=no
case "${1:-}" in
    --verify) VERIFY=yes ;;
    "") ;;
    *) echo "usage: $0 [--verify]" >&2; exit 2 ;;
esac
command -v dotnet >/dev/null 2>&1 || {
    echo "build-decl.sh: dotnet not found (the .NET SDK)" >&2
    exit 1
}

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT INT TERM

mkdir -p "$W/decl"
cp "$DATA/src/decl/Decl.cs" "$W/decl/"
cat > "$W/decl/Decl.csproj" <<EOP
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net10.0</TargetFramework>
    <OutputType>Library</OutputType>
    <AssemblyName>Decl</AssemblyName>
    <LangVersion>13</LangVersion>
    <DebugType>none</DebugType>
    <Deterministic>true</Deterministic>
    <ImplicitUsings>disable</ImplicitUsings>
    <Nullable>disable</Nullable>
    <GenerateDocumentationFile>false</GenerateDocumentationFile>
    <PathMap>\$(MSBuildProjectDirectory)=/_/src/decl</PathMap>
  </PropertyGroup>
</Project>
EOP
echo "build-decl.sh: decl/Decl.dll"
(cd "$W/decl" && dotnet build -nologo -v q -c Release -o "$W/out" >"$W/log" 2>&1) || {
    cat "$W/log" >&2
    echo "build-decl.sh: dotnet build of Decl failed" >&2
    exit 1
}

if [ "$VERIFY" = yes ]; then
    if cmp -s "$W/out/Decl.dll" "$DATA/decl/Decl.dll"; then
        echo "same: decl/Decl.dll"
        exit 0
    fi
    echo "DIFFERS: decl/Decl.dll"
    exit 1
fi
mkdir -p "$DATA/decl"
cp "$W/out/Decl.dll" "$DATA/decl/Decl.dll"
echo "build-decl.sh: done"
