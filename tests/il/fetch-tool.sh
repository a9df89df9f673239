#!/bin/sh
# Fetch one of the .NET SDK's native IL tools from NuGet into the build
# tree, once, and print its path: `fetch-tool.sh ildasm|ilasm BUILDDIR`.
# The package (runtime.linux-x64.Microsoft.NETCore.ILDAsm or .ILAsm) comes
# from the feeds dotnet is configured with, by `dotnet restore` of a
# project that only downloads it. Versions: $ILDASM_VERSION, $ILASM_VERSION
# (the newest 10.0 of each this machine's feed lists). Exit 77 saying why
# when it cannot be had.
set -u
tool=$1
build=$2
case $tool in
ildasm) pkg=runtime.linux-x64.Microsoft.NETCore.ILDAsm version=${ILDASM_VERSION:-10.0.15} ;;
ilasm) pkg=runtime.linux-x64.Microsoft.NETCore.ILAsm version=${ILASM_VERSION:-10.0.14} ;;
*) echo "fetch-tool.sh: ildasm or ilasm" >&2; exit 99 ;;
esac
dir=$build/tests/il/nuget
lower=$(echo "$pkg" | tr 'A-Z' 'a-z')
path=$dir/pkgs/$lower/$version/runtimes/linux-x64/native/$tool
if [ ! -f "$path" ]; then
    command -v dotnet >/dev/null 2>&1 ||
        { echo "fetch-tool.sh: no dotnet to fetch $pkg with" >&2; exit 77; }
    mkdir -p "$dir/$tool" || exit 99
    cat > "$dir/$tool/fetch.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>netstandard2.0</TargetFramework></PropertyGroup>
  <ItemGroup>
    <PackageDownload Include="$pkg" Version="[$version]" />
  </ItemGroup>
</Project>
PROJ
    if ! dotnet restore "$dir/$tool/fetch.csproj" --packages "$dir/pkgs" >"$dir/$tool/restore.log" 2>&1 ||
        [ ! -f "$path" ]; then
        echo "fetch-tool.sh: could not fetch $pkg $version (see $dir/$tool/restore.log):" >&2
        tail -3 "$dir/$tool/restore.log" >&2
        exit 77
    fi
fi
chmod +x "$path" 2>/dev/null
echo "$path"
