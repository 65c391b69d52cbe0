"""FastMCP's SEP-2640 skills provider as a stdio server, for the skills
profile (conformance/sep-2640/README.md; adapter
conformance/sep-2640/adapters/fastmcp.json, deviations
conformance/deviations/fastmcp.md).

    python fastmcp_skills.py DIR [--http PORT]

serves the skills folder DIR over stdio (or, with `--http PORT`, over
Streamable HTTP at http://127.0.0.1:PORT/mcp) with PyPI `fastmcp` (pinned in .ci/test's
conformance step) exactly as its documentation shows: a
`SkillsDirectoryProvider` with the experimental SEP-2640 behaviour on,
registered as a provider and as the source of a `SkillsExtension`. Nothing
here decides an answer; every answer is FastMCP's.
"""

import sys

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


def main() -> None:
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--http"):
        sys.exit("usage: fastmcp_skills.py SKILLS_DIR [--http PORT]")
    mcp = FastMCP("fastmcp-skills-conformance")
    p = SkillsDirectoryProvider(roots=[args[0]], experimental_skills=True)
    mcp.add_provider(p)
    mcp.add_extension(SkillsExtension(providers=[p]))
    if len(args) == 3:
        mcp.run(transport="http", host="127.0.0.1", port=int(args[2]), show_banner=False)
    else:
        mcp.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
