#!/usr/bin/env python3
"""Writes the Package.swift of a package that holds only some test targets of Ferry's
and the targets they need, for .ci/tsan.sh's sanitized build.

Why: `swift build --build-tests` builds every test target, so a sanitized build of the
whole package compiles Ferry, swift-crypto, jwt-kit and FerryTests to run FerryHTTP's and
FerryKit's tests. This package names the same source folders (through symlinks beside it)
with the dependencies Package.swift gives them, read from `swift package dump-package`,
so it cannot drift from the real manifest.

  swift package dump-package | python3 .ci/tsan-manifest.py FerryHTTPTests FerryKitUnitTests

A target that uses something this script does not copy (plugins, resources, settings)
stops it, rather than being built differently from the real package.
"""
import json
import sys


def fail(message):
    sys.exit(f"tsan-manifest: {message}")


def swift(text):
    return json.dumps(text)


def main():
    package = json.load(sys.stdin)
    roots = sys.argv[1:]
    if not roots:
        fail("name the test targets")
    targets = {t["name"]: t for t in package["targets"]}

    # The targets the roots need, in the real manifest's order.
    needed, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        if name not in targets:
            fail(f"no target {name}")
        needed.add(name)
        for dep in targets[name]["dependencies"]:
            if "byName" in dep or "target" in dep:
                todo.append((dep.get("byName") or dep["target"])[0])

    used_packages, lines = set(), []
    for target in package["targets"]:
        name = target["name"]
        if name not in needed:
            continue
        for key in ("pluginUsages", "resources", "settings"):
            if target.get(key):
                fail(f"{name} has {key}: copy them here first")
        kind = target["type"]
        folder = target.get("path") or ("Tests/" if kind == "test" else "Sources/") + name
        args = [f"name: {swift(name)}"]
        deps = []
        for dep in target["dependencies"]:
            if "product" in dep:
                product, from_package = dep["product"][0], dep["product"][1]
                used_packages.add(from_package.lower())
                deps.append(f".product(name: {swift(product)}, package: {swift(from_package)})")
            else:
                deps.append(swift((dep.get("byName") or dep["target"])[0]))
        if kind == "system":
            args.append(f"path: {swift(folder)}")
            if target.get("pkgConfig"):
                args.append(f"pkgConfig: {swift(target['pkgConfig'])}")
            lines.append(f"        .systemLibrary({', '.join(args)}),")
            continue
        if kind not in ("regular", "test"):
            fail(f"{name} is a {kind} target")
        args.append(f"dependencies: [{', '.join(deps)}]")
        args.append(f"path: {swift(folder)}")
        if target.get("exclude"):
            args.append(f"exclude: {json.dumps(target['exclude'])}")
        lines.append(f"        .{'testTarget' if kind == 'test' else 'target'}({', '.join(args)}),")

    dependencies = []
    for dep in package["dependencies"]:
        control = dep.get("sourceControl", [None])[0]
        if control is None:
            fail(f"a dependency that is not a source-control one: {dep}")
        if control["identity"] not in used_packages:
            continue
        url = control["location"]["remote"][0]["urlString"]
        requirement = control["requirement"]
        if "range" in requirement:
            bounds = requirement["range"][0]
            dependencies.append(f"        .package(url: {swift(url)}, {swift(bounds['lowerBound'])}..<{swift(bounds['upperBound'])}),")
        elif "exact" in requirement:
            dependencies.append(f"        .package(url: {swift(url)}, exact: {swift(requirement['exact'][0])}),")
        else:
            fail(f"{url}: requirement {requirement}")
    missing = used_packages - {d["sourceControl"][0]["identity"] for d in package["dependencies"] if "sourceControl" in d}
    if missing:
        fail(f"products from packages not found: {sorted(missing)}")

    tools = ".".join(package["toolsVersion"]["_version"].split(".")[:2])
    platforms = ", ".join(f".{p['platformName'].replace('macos', 'macOS').replace('ios', 'iOS')}({swift(p['version'])})" for p in package.get("platforms") or [])
    modes = ", ".join(f".v{m}" for m in package.get("swiftLanguageVersions") or [])
    print(f"// swift-tools-version:{tools}")
    print("// Written by .ci/tsan-manifest.py from Ferry's Package.swift: do not edit.")
    print("import PackageDescription")
    print()
    print("let package = Package(")
    print(f"    name: {swift(package['name'] + 'TSan')},")
    if platforms:
        print(f"    platforms: [{platforms}],")
    print("    dependencies: [")
    print("\n".join(dependencies))
    print("    ],")
    print("    targets: [")
    print("\n".join(lines))
    print("    ]" + ("," if modes else ""))
    if modes:
        print(f"    swiftLanguageModes: [{modes}]")
    print(")")


main()
