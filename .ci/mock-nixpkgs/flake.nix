# A stand-in for nixpkgs, for the offline flake check (.ci/nix-check) on
# machines that cannot fetch nixpkgs. It stubs exactly the attributes
# ../../flake.nix uses and nothing more, so a misspelt or missing attribute
# fails here as it would against nixpkgs. The lib functions are real
# implementations (the source filter really runs); every package is a
# trivial derivation that builds with /bin/sh; each builder function
# coerces what it is given to strings as mkDerivation would (so every
# package a build names is forced) and asserts what the real one would
# refuse. Passing proves the flake's wiring, never that nixpkgs builds it.
{
  description = "mock nixpkgs for the offline flake check";

  outputs =
    { self }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];

      lib = {
        genAttrs =
          names: f:
          builtins.listToAttrs (
            map (name: {
              inherit name;
              value = f name;
            }) names
          );
        optional = cond: x: if cond then [ x ] else [ ];
        optionals = cond: xs: if cond then xs else [ ];
        optionalString = cond: s: if cond then s else "";
        optionalAttrs = cond: attrs: if cond then attrs else { };
        # What nixpkgs' cleanSourceWith comes down to for a path source.
        cleanSourceWith =
          {
            src,
            filter ? _: _: true,
            name ? "source",
          }:
          builtins.path {
            path = src;
            inherit filter name;
          };
        licenses.mit = {
          spdxId = "MIT";
          shortName = "mit";
        };
      };

      forSystem =
        system:
        let
          isLinux = builtins.match ".*-linux" system != null;

          # A derivation that builds: one line in each output.
          stub =
            name: attrs:
            derivation (
              attrs
              // {
                inherit name system;
                outputs = attrs.outputs or [ "out" ];
                builder = "/bin/sh";
                args = [
                  "-c"
                  "for o in $outputs; do eval \"echo stub ${name} > \\$$o\"; done"
                ];
              }
            );
          pkg = name: stub name { };

          # mkDerivation turns every attribute but these into the build's
          # environment; the rest must coerce to strings.
          toEnv = args: removeAttrs args [ "meta" "passthru" "cargoLock" ];

          # The arguments of dockerTools.buildLayeredImage the flake may
          # pass, and the keys an OCI image config has.
          imageArgs = [ "name" "tag" "fromImage" "contents" "config" "created" "maxLayers" "extraCommands" "fakeRootCommands" "enableFakechroot" "includeStorePaths" "architecture" "passthru" ];
          ociConfigKeys = [ "User" "ExposedPorts" "Env" "Entrypoint" "Cmd" "Volumes" "WorkingDir" "Labels" "StopSignal" ];
          unknown = allowed: attrs: builtins.filter (n: !builtins.elem n allowed) (builtins.attrNames attrs);
        in
        {
          stdenv = { inherit isLinux; };

          rustPlatform.buildRustPackage =
            args:
            assert args ? cargoLock.lockFile || throw "buildRustPackage: no cargoLock.lockFile";
            assert builtins.pathExists args.cargoLock.lockFile || throw "buildRustPackage: ${toString args.cargoLock.lockFile} is not there (is it tracked by git?)";
            assert !(args ? cargoHash) || throw "buildRustPackage: cargoHash and cargoLock both given";
            stub "${args.pname}-${args.version}" (toEnv args) // { meta = args.meta or { }; };

          dockerTools.buildLayeredImage =
            args:
            assert unknown imageArgs args == [ ] || throw "buildLayeredImage: unknown arguments ${toString (unknown imageArgs args)}";
            assert unknown ociConfigKeys args.config == [ ] || throw "buildLayeredImage: not OCI config keys: ${toString (unknown ociConfigKeys args.config)}";
            assert builtins.isList args.config.Entrypoint || throw "buildLayeredImage: config.Entrypoint must be a list";
            assert builtins.isString args.config.User || throw "buildLayeredImage: config.User must be a string";
            assert builtins.all builtins.isString (args.config.Env or [ ]) || throw "buildLayeredImage: config.Env must be strings";
            stub "${args.name}.tar.gz" {
              config = builtins.toJSON args.config;
              contents = args.contents or [ ];
              extraCommands = args.extraCommands or "";
            };

          runCommand = name: env: buildCommand: stub name (toEnv env // { inherit buildCommand; });

          mkShell = args: stub "shell" (toEnv args);

          nodejs-slim = pkg "nodejs-slim";
          nodejs = pkg "nodejs";
          python3 = pkg "python3";
          cargo = pkg "cargo";
          rustc = pkg "rustc";
          clippy = pkg "clippy";
          rustfmt = pkg "rustfmt";
          rust-analyzer = pkg "rust-analyzer";
          cargo-nextest = pkg "cargo-nextest";
          cargo-insta = pkg "cargo-insta";
          cargo-mutants = pkg "cargo-mutants";
          nginx = pkg "nginx";
          openssl = pkg "openssl";
        }
        // lib.optionalAttrs isLinux {
          util-linux = pkg "util-linux";
          valgrind = pkg "valgrind";
          strace = pkg "strace";
        };
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs systems forSystem;
    };
}
