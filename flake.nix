{
  description = "skill-mcp: an MCP server that serves a directory of Agent Skills and runs only the scripts a skill declares";

  # nixos-25.11 carries rustc 1.91; the crate needs 1.88 (edition 2024, rmcp
  # 3.11). flake.lock pins the exact revision and its narHash.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.11";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];

      cargoToml = builtins.fromTOML (builtins.readFile ./Cargo.toml);
      inherit (cargoToml.package) version;
      # The registry name (server.json); the OCI image carries it as the
      # label the MCP registry checks for ownership.
      registryName = (builtins.fromJSON (builtins.readFile ./server.json)).name;

      # What the build and the gate read. The README, the flake itself and
      # .ci/mock-nixpkgs stay out, so editing them rebuilds nothing.
      root = toString ./.;
      src = lib.cleanSourceWith {
        name = "skill-mcp-source";
        src = ./.;
        filter =
          path: _type:
          let
            rel = builtins.substring (builtins.stringLength root + 1) (-1) (toString path);
            top = builtins.head (builtins.match "([^/]*).*" rel);
          in
          builtins.elem rel [
            "Cargo.toml"
            "Cargo.lock"
            "mint.yaml"
            "server.json"
            ".ci"
            ".ci/test"
          ]
          || builtins.elem top [
            "src"
            "benches"
            "tests"
            "skills"
            "conformance"
            "spec"
          ];
      };

      meta = {
        description = cargoToml.package.description;
        homepage = cargoToml.package.repository;
        license = lib.licenses.mit;
        mainProgram = "skill-mcp";
      };

      forSystem =
        pkgs:
        let
          # The closed interpreter set, pinned to absolute store paths at
          # build time (src/interpreters.rs reads SKILL_MCP_NODE and
          # SKILL_MCP_PYTHON3 with option_env!). The binary keeps the path,
          # so the interpreter is part of the package's closure.
          node = "${pkgs.nodejs-slim}/bin/node";
          python3 = "${pkgs.python3}/bin/python3";

          # What every cargo build here shares: the source, the crates
          # vendored from Cargo.lock (no cargoHash: all come from crates.io)
          # and the pinned node.
          common = {
            inherit version src;
            cargoLock.lockFile = ./Cargo.lock;
            SKILL_MCP_NODE = node;
          };

          # The server. The default build (the workspace's default members:
          # the server and the conformance runner's crate) also installs the
          # runner and its cases as a second output, so `conformance` costs
          # no second compile.
          server =
            {
              pname,
              features ? [ ],
              extraEnv ? { },
              withRunner ? false,
            }:
            pkgs.rustPlatform.buildRustPackage (
              common
              // extraEnv
              // {
                inherit pname meta;
                buildFeatures = features;
                cargoBuildFlags = lib.optionals (!withRunner) [
                  "--bin"
                  "skill-mcp"
                ];
                outputs = [ "out" ] ++ lib.optional withRunner "conformance";
                # Where a copied binary still finds the bundled skills
                # (spec CONF-005); beside the binary is looked at first.
                SKILL_MCP_SKILLS_DIR = "${placeholder "out"}/share/skill-mcp/skills";
                # The gate runs in checks.*, through .ci/test.
                doCheck = false;
                # The conformance cases hold a dangling symlink and a loop
                # on purpose (DISC-011, DISC-014), which stdenv's fixup
                # would refuse; and the bundled skills and cases are served
                # byte for byte, so no shebang in them is rewritten.
                dontCheckForBrokenSymlinks = withRunner;
                dontPatchShebangs = true;
                postInstall = ''
                  mkdir -p $out/share/skill-mcp
                  cp -r skills $out/share/skill-mcp/skills
                ''
                + lib.optionalString withRunner ''
                  mkdir -p $conformance/bin $conformance/share/skill-mcp
                  mv $out/bin/skill-mcp-conformance $conformance/bin/
                  cp -r conformance $conformance/share/skill-mcp/conformance
                  # The runner's own crate is source, not a case.
                  rm -rf $conformance/share/skill-mcp/conformance/runner
                '';
              }
            );

          # Named as the Cargo package is (`skill-mcp` on crates.io is
          # another project's); the binary and the image stay `skill-mcp`.
          default = server {
            pname = cargoToml.package.name;
            withRunner = true;
          };
          with-python = server {
            pname = "${cargoToml.package.name}-with-python";
            features = [ "python3" ];
            extraEnv.SKILL_MCP_PYTHON3 = python3;
          };

          # One step of .ci/test (`.ci/test STEP ARGS`), run in the sandbox
          # against the vendored crates: the flake's checks and CI run the
          # same commands. The sandbox has no network, so the tests that
          # drive a fetched third-party client are left out
          # (SKILL_MCP_CLIENTS=none; see .ci/test).
          gate =
            name: command: inputs: env:
            pkgs.rustPlatform.buildRustPackage (
              common
              // env
              // {
                pname = "skill-mcp-${name}";
                nativeBuildInputs = inputs;
                CARGO_NET_OFFLINE = "true";
                SKILL_MCP_CLIENTS = "none";
                buildPhase = ''
                  runHook preBuild
                  export HOME=$TMPDIR
                  bash .ci/test ${command}
                  runHook postBuild
                '';
                doCheck = false;
                installPhase = "touch $out";
              }
            );

          image = pkgs.dockerTools.buildLayeredImage {
            name = "skill-mcp";
            tag = version;
            # No contents: the image is the server's closure (node pinned
            # in it, the bundled skills under its share/) plus an empty
            # /tmp. No shell, no coreutils, nothing on a PATH.
            extraCommands = "mkdir -m 1777 tmp";
            config = {
              Entrypoint = [ "${default}/bin/skill-mcp" ];
              User = "65534:65534";
              WorkingDir = "/tmp";
              Env = [
                "HOME=/tmp"
                "TMPDIR=/tmp"
              ];
              Labels = {
                "io.modelcontextprotocol.server.name" = registryName;
                "org.opencontainers.image.source" = cargoToml.package.repository;
                "org.opencontainers.image.version" = version;
              };
            };
          };
        in
        {
          packages = {
            inherit default with-python;
            conformance = default.conformance;
          }
          // lib.optionalAttrs pkgs.stdenv.isLinux { inherit image; };

          apps = {
            default = {
              type = "app";
              program = "${default}/bin/skill-mcp";
            };
            conformance = {
              type = "app";
              program = "${default.conformance}/bin/skill-mcp-conformance";
            };
          };

          checks = {
            build = default;
            build-with-python = with-python;
            fmt = gate "fmt" "fmt" [ pkgs.rustfmt ] { };
            clippy = gate "clippy" "clippy" [ pkgs.clippy ] { };
            spec-sync = gate "spec-sync" "spec" [ pkgs.cargo-nextest ] { };
          }
          # The checks that start the server and watch it run on Linux only:
          # the suite reads /proc (memory, process groups, descriptors) and
          # calls util-linux (prlimit, setpriv), and only Linux has run it.
          # Darwin keeps the builds, fmt, clippy and spec-sync.
          // lib.optionalAttrs pkgs.stdenv.isLinux {
            # util-linux: prlimit (tests/faults.rs) and setpriv (the
            # unprivileged conformance cases, through tests/conformance.rs,
            # if the build runs as root). No node on PATH: the tests reach
            # node through the pin (tests/faults.rs checks which). No strace:
            # SKILL_MCP_CLIENTS=none leaves out nothing_written. nginx:
            # tests/replicas.rs and the README's reverse proxy
            # (tests/readme.rs), which openssl also serves over TLS.
            tests = gate "tests" "tests" [
              pkgs.cargo-nextest
              pkgs.util-linux
              pkgs.nginx
              pkgs.openssl
            ] { };
            # The interpreter set of the python3 build (tests/packaging.rs
            # asserts it for whichever build runs it).
            interpreters-python3 = gate "interpreters-python3" "tests --features python3 --test integration packaging::" [
              pkgs.cargo-nextest
            ] { SKILL_MCP_PYTHON3 = python3; };
            # The packaged runner against the packaged server, with nothing
            # but the runner's own PATH: node comes from the pin or not at all.
            conformance =
              pkgs.runCommand "skill-mcp-conformance-check"
                {
                  # setpriv, for the unprivileged cases if the build runs as root.
                  nativeBuildInputs = [ pkgs.util-linux ];
                  SKILL_MCP_SERVER = "${default}/bin/skill-mcp";
                  SKILL_MCP_CONFORMANCE = "${default.conformance}/bin/skill-mcp-conformance";
                }
                ''
                  bash ${src}/.ci/test conformance
                  touch $out
                '';
            inherit image;
          };

          devShells.default = pkgs.mkShell {
            inputsFrom = [ default ];
            packages = [
              pkgs.cargo
              pkgs.rustc
              pkgs.clippy
              pkgs.rustfmt
              pkgs.rust-analyzer
              pkgs.cargo-nextest
              pkgs.cargo-insta
              pkgs.cargo-mutants
              pkgs.nodejs
              pkgs.python3
            ]
            ++ lib.optionals pkgs.stdenv.isLinux [
              pkgs.util-linux
              pkgs.valgrind
              pkgs.strace
            ];
          };
        };

      perSystem = lib.genAttrs systems (system: forSystem nixpkgs.legacyPackages.${system});
      collect = output: builtins.mapAttrs (_: s: s.${output}) perSystem;
    in
    {
      packages = collect "packages";
      apps = collect "apps";
      checks = collect "checks";
      devShells = collect "devShells";
    };
}
