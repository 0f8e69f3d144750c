/*
 * help.c - the help of every glassbox command, in one table.
 *
 * `glassbox COMMAND --help` (or -h, or `glassbox help COMMAND`) prints the
 * command's entry: usage, what it does, its options and an example.
 * `glassbox help --markdown` prints the same entries as docs/cli.md; a
 * test (tests/check-cli-doc.sh) fails when the checked-in file differs, so
 * the page and the binary cannot drift (`make cli-doc` rewrites it).
 *
 * The text is static and nothing here allocates.
 */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

/* One command's help. Each text ends in a newline; options and example
 * may be NULL (version). */
struct cli_help {
	const char *name;
	const char *summary; /* one line, for the command list */
	const char *usage;   /* one or more "glassbox ..." lines */
	const char *about;   /* what it does, a short paragraph */
	const char *options; /* "  --flag VALUE   meaning" lines */
	const char *example; /* shell lines */
};

#define DATA_DIR_OPTION                                                                     \
	"  --data-dir DIR      state, evidence and run dirs (default $GLASSBOX_DATA_DIR,\n" \
	"                      else $XDG_DATA_HOME/glassbox or ~/.local/share/glassbox)\n"
#define CHROMIUM_OPTION                                                                 \
	"  --chromium PATH     the Chromium binary (default $GLASSBOX_CHROMIUM, else\n" \
	"                      /usr/lib/chromium/chromium)\n"
#define TENANT_POLICY_OPTION(flag)                                                             \
	"  " flag " FILE       the tenant's policy, JSON (default $GLASSBOX_CONFIG): egress\n" \
	"                      rules (docs/egress.md), risk rules and approvals\n"             \
	"                      (docs/gates.md), require_evidence, limits\n"

static const struct cli_help helps[] = {
	{ "mcp", "serve the browser tools over MCP on stdin/stdout (one local tenant)",
	  "glassbox mcp [--data-dir DIR] [--config FILE] [--tenant T] [--chromium PATH]\n"
	  "             [--headed] [Playwright MCP's options]\n",
	  "Serves one MCP client on stdin/stdout with its own browser session. An MCP\n"
	  "client normally starts it itself (see `glassbox init` for the configuration to\n"
	  "add). End of input, SIGTERM or SIGINT end it cleanly. It takes Playwright\n"
	  "MCP's server options too (--name VALUE or --name=VALUE), so a client set up for\n"
	  "Playwright MCP runs it unchanged; an option glassbox does not honour (such as\n"
	  "--allow-unrestricted-file-access) is refused at start with the reason. A\n"
	  "--config file with Playwright MCP's keys (browser, capabilities, outputDir,\n"
	  "snapshot, timeouts, testIdAttribute, codegen, imageResponses, console) sets these\n"
	  "options; the policy is then $GLASSBOX_CONFIG's.\n",
	  DATA_DIR_OPTION TENANT_POLICY_OPTION(
	      "--config") "  --tenant T          the tenant it serves (default $GLASSBOX_TENANT, "
	                  "else\n"
	                  "                      \"local\"): its profiles, secrets, evidence and "
	                  "audit trail\n" CHROMIUM_OPTION
	                  "  --headed            show the browser window (needs a display)\n"
	                  "  --headless          no window (the default)\n"
	                  "  --snapshot-mode M   what each action's answer carries: full (the\n"
	                  "                      page snapshot, default), changed (what changed\n"
	                  "                      since the last snapshot shown), none\n"
	                  "  --output-dir DIR    where tools also write the files they are asked\n"
	                  "                      for (filename arguments)\n"
	                  "  --test-id-attribute NAME  the attribute of getByTestId in the code\n"
	                  "                      shown (default data-testid)\n"
	                  "  --timeout-action MS each call's deadline (default 30000)\n"
	                  "  --timeout-navigation MS  browser_navigate's deadline\n"
	                  "  --viewport-size WxH the browser's viewport (default 1280x720)\n"
	                  "  --user-agent UA     the browser's User-Agent\n"
	                  "  --grant-permissions LIST  granted to every page (geolocation,\n"
	                  "                      clipboard-read, clipboard-write, ...)\n"
	                  "  --caps LIST         offer the tools of these capability groups too\n"
	                  "  --image-responses omit  screenshots are not returned as images\n"
	                  "                      (still kept as evidence and in --output-dir);\n"
	                  "                      allow (the default) returns them\n"
	                  "  --vision            the same as --caps vision (Playwright MCP's\n"
	                  "                      older flag)\n"
	                  "  --no-structured-content  Playwright MCP's exact results: tools/list\n"
	                  "                      declares no outputSchema and results carry no\n"
	                  "                      structuredContent (the policy's\n"
	                  "                      \"structured_content\": false does the same)\n"
	                  "  --codegen LANG      the code shown: typescript, python, java, "
	                  "csharp,\n"
	                  "                      none\n"
	                  "  --snapshot-boxes    every snapshot shows each element's [box=...]\n"
	                  "  --console-level L   the console messages the output dir's\n"
	                  "                      console-*.log files keep: error, warning,\n"
	                  "                      info (default) or debug, and the more severe\n"
	                  "  --isolated          accepted: every session's browser is private\n"
	                  "  --no-sandbox        Chromium's own sandbox off; glassbox's uid,\n"
	                  "                      network namespace and egress proxy stay on\n"
	                  "  --secrets FILE      a dotenv file (NAME=value): browser_type text\n"
	                  "                      that names one types its value (held in\n"
	                  "                      memory; the file may not be writable by others)\n"
	                  "  --browser NAME      chrome or chromium (others are refused)\n",
	  "glassbox mcp --config fixtures/policy/loopback.json\n"
	  "GLASSBOX_CONFIG=policy.json glassbox mcp --snapshot-mode=changed --output-dir=out\n" },
	{ "serve", "serve the browser tools over MCP Streamable HTTP to tenants",
	  "glassbox serve [--data-dir DIR] [--policy FILE] [--chromium PATH] [--headed]\n"
	  "glassbox serve --config SERVICE.json [--data-dir DIR] [--chromium PATH]\n",
	  "Serves MCP Streamable HTTP on /mcp. Without --config it serves one tenant,\n"
	  "\"local\", on 127.0.0.1:8931, and prints its bearer token on the first start\n"
	  "(only its hash is kept, in DATA/serve-local.json). --policy FILE (or\n"
	  "$GLASSBOX_CONFIG) is that tenant's policy; without one, public hosts are\n"
	  "allowed and private and loopback addresses refused. With --config, the service\n"
	  "config names the listener, the tenants, their tokens and their policies\n"
	  "(docs/service.md). SIGTERM or SIGINT stop it gracefully.\n",
	  DATA_DIR_OPTION
	  "  --policy FILE       the local tenant's policy, JSON (default $GLASSBOX_CONFIG):\n"
	  "                      the same file `glassbox mcp --config` takes\n"
	  "  --config FILE       the service config, JSON: listen, tenants (each with\n"
	  "                      token_sha256 and policy), limits, admin listener\n"
	  "                      (docs/service.md); not a tenant policy\n" CHROMIUM_OPTION
	  "  --headed            show the browsers' windows (needs a display)\n",
	  "glassbox serve --policy fixtures/policy/loopback.json\n" },
	{ "init", "create the data dir, check that Chromium starts, print a client config",
	  "glassbox init [--data-dir DIR] [--chromium PATH]\n",
	  "Creates the data dir (0700) if it is missing, starts Chromium once to check that\n"
	  "it works here, says which isolation layers are on (network namespace, the\n"
	  "browser's sandbox), and prints the MCP client configuration that runs\n"
	  "`glassbox mcp` on this data dir.\n",
	  DATA_DIR_OPTION CHROMIUM_OPTION, "glassbox init --data-dir /tmp/gb\n" },
	{ "approvals", "list, show, approve or deny actions held for a person's approval",
	  "glassbox approvals list [--tenant T] [--all] [--json]\n"
	  "glassbox approvals show ID [--json]\n"
	  "glassbox approvals approve ID [--reason TEXT] [--by NAME]\n"
	  "glassbox approvals deny ID [--reason TEXT] [--by NAME]\n",
	  "An action that the tenant's risk rules hold is not executed: its result carries\n"
	  "an approval id. Approving lets exactly that action on exactly that element run\n"
	  "once, when the client repeats the call with \"approval\": ID. Talks to the\n"
	  "running service through DATA/run/admin.sock, or works on DATA/glassbox.db\n"
	  "directly when none runs. Root or the data dir's owner only.\n",
	  DATA_DIR_OPTION "  --tenant T          list one tenant's approvals only\n"
	                  "  --all               list every state, not only those waiting\n"
	                  "  --reason TEXT       why, kept in the audit trail\n"
	                  "  --by NAME           who decided (default: the user running it)\n"
	                  "  --json              machine-readable output\n",
	  "glassbox approvals list\n"
	  "glassbox approvals approve apr-5c1f0e9a2b7d4c3e8f61 --reason \"checked with the "
	  "customer\"\n" },
	{ "audit", "verify the signed audit trail, export its public key, purge old records",
	  "glassbox audit verify [--tenant T] [--pubkey FILE] [--json]\n"
	  "glassbox audit verify --store CONFIG [--tenant T] [--pubkey FILE] [--json]\n"
	  "glassbox audit export-key [-o FILE]\n"
	  "glassbox audit purge --tenant T --days N\n",
	  "verify checks every tenant's audit chain (or one): order, hashes, signatures,\n"
	  "and that each artifact a record references exists and is unchanged; it names\n"
	  "the first record that fails and exits 1. With --store it verifies the merged\n"
	  "trail that every replica shipped to the object store CONFIG names (each\n"
	  "replica's chain, segment by segment, read from the store alone) and names a\n"
	  "missing or altered segment. export-key writes the public key\n"
	  "reviewers verify with. purge removes a tenant's records and artifacts older\n"
	  "than N days, after a signed purge record, so the shortened chain still\n"
	  "verifies. Exit status: 0 ok, 1 the trail does not verify, 2 usage, 3 could\n"
	  "not run.\n",
	  DATA_DIR_OPTION
	  "  --tenant T          one tenant only\n"
	  "  --pubkey FILE       verify against this public key (a reviewer's copy),\n"
	  "                      not the data dir's\n"
	  "  --store CONFIG      the service config whose object_store holds the trail\n"
	  "  -o FILE             where export-key writes (default stdout)\n"
	  "  --days N            purge: keep the last N days\n"
	  "  --json              machine-readable output\n",
	  "glassbox audit verify --tenant local\n" },
	{ "objects", "check, list, read and write the object store a service config names",
	  "glassbox objects check --config FILE\n"
	  "glassbox objects ls [PREFIX] --config FILE\n"
	  "glassbox objects get KEY [-o FILE] --config FILE\n"
	  "glassbox objects put KEY FILE --config FILE\n",
	  "Uses the object_store of a service config (docs/deploy.md): a directory, or an\n"
	  "S3-API bucket with its credentials from files or AWS_* variables. check stores a\n"
	  "probe object, reads it back and lists it, so endpoint, bucket, region and\n"
	  "credentials are known to work before the service relies on them. put never\n"
	  "replaces an object (If-None-Match). Exit status: 0 done, 1 the store refused or\n"
	  "could not be reached, 2 usage.\n",
	  "  --config FILE       the service config whose object_store to use\n"
	  "  -o FILE             where get writes (default stdout)\n",
	  "glassbox objects check --config /etc/glassbox/serve.json\n" },
	{ "report", "write the audit trail as one self-contained HTML file for reviewers",
	  "glassbox report --tenant T [--since YYYY-MM-DD] -o FILE [--pubkey FILE]\n"
	  "glassbox report --session ID [--tenant T] -o FILE [--pubkey FILE]\n",
	  "Writes a timeline of the trail: each action with who did it (tenant,\n"
	  "credential, client), what (tool, element role and name), where (URL, frame),\n"
	  "the verdict and its screenshot; approvals, refusals and blocked requests;\n"
	  "headed by whether the chain verified.\n",
	  DATA_DIR_OPTION "  --tenant T          the tenant whose trail to report\n"
	                  "  --session ID        one session only\n"
	                  "  --since YYYY-MM-DD  records from that day on\n"
	                  "  -o FILE             the HTML file to write\n"
	                  "  --pubkey FILE       verify against this public key\n",
	  "glassbox report --tenant local -o trail.html\n" },
	{ "trace", "export a session as a Playwright trace (trace.zip for show-trace)",
	  "glassbox trace export --session ID [--tenant T] [-o FILE]\n"
	  "glassbox trace export --flow NAME [--tenant T] [-o FILE]\n",
	  "Writes the session's actions as a Playwright trace that `npx playwright\n"
	  "show-trace FILE` opens: one action per tool call with its target, start and\n"
	  "end, error, screenshots before and after, its requests and console errors,\n"
	  "and glassbox's verdicts and evidence hashes in its result. Built from the\n"
	  "audit log (already redacted); the export is itself recorded there.\n",
	  DATA_DIR_OPTION "  --session ID        the session (its records name it)\n"
	                  "  --flow NAME         the newest run of the flow of that name\n"
	                  "  --tenant T          the tenant (default: the one whose log has "
	                  "the session;\n"
	                  "                      \"local\" with --flow)\n"
	                  "  -o FILE             the zip to write (default trace.zip)\n",
	  "glassbox trace export --flow checkout -o checkout.zip\n"
	  "npx playwright show-trace checkout.zip\n" },
	{ "har", "export a session's network as a HAR 1.2 file",
	  "glassbox har export --session ID [--tenant T] [-o FILE]\n"
	  "glassbox har export --flow NAME [--tenant T] [-o FILE]\n",
	  "Writes one HAR entry per request of the session's actions (method, URL,\n"
	  "headers, status, MIME type, bytes, times) and per request the policy blocked.\n"
	  "Header values that may carry credentials and credential query parameters are\n"
	  "redacted; cookies are not recorded, text response bodies only when the policy\n"
	  "says \"har_bodies\" (size-capped). The export is recorded in the audit log.\n",
	  DATA_DIR_OPTION "  --session ID        the session\n"
	                  "  --flow NAME         the newest run of the flow of that name\n"
	                  "  --tenant T          the tenant (as for trace export)\n"
	                  "  -o FILE             the file to write (default: standard output)\n",
	  "glassbox har export --session 84da1df6345eb3250dec97e3b7a955e3 -o session.har\n" },
	{ "session", "turn a session into a test: a glassbox flow or a Playwright spec",
	  "glassbox session export --session ID --as flow|playwright [--name NAME] [-o FILE]\n"
	  "glassbox session export --flow NAME --as flow|playwright [--name NAME] [-o FILE]\n",
	  "Writes the session's actions that succeeded and change or wait on the page\n"
	  "as a test: --as flow, a glassbox flow (docs/flows.md) with each step's passing\n"
	  "verdicts as its expect checks, for `glassbox run`; --as playwright, a\n"
	  "Playwright Test spec with the code each action ran and an expect() per\n"
	  "verdict, for `npx playwright test`. Redacted text (a typed password) is read\n"
	  "from the variable TYPED_SECRET. The export is recorded in the audit log.\n",
	  DATA_DIR_OPTION "  --session ID        the session\n"
	                  "  --flow NAME         the newest run of the flow of that name\n"
	                  "  --as FORMAT         flow or playwright\n"
	                  "  --name NAME         the test's name (default: from the flow or "
	                  "session)\n"
	                  "  --tenant T          the tenant (as for trace export)\n"
	                  "  -o FILE             the file to write (default: standard output)\n",
	  "glassbox session export --flow checkout --as flow -o checkout-replay.json\n"
	  "glassbox session export --flow checkout --as playwright -o checkout.spec.ts\n" },
	{ "run", "run QA flows (JSON files) with JUnit XML and an HTML report",
	  "glassbox run FLOW... [-j N] [--junit FILE] [--report FILE] [--trace DIR]\n"
	  "             [--vars FILE] [--config POLICY] [--profile NAME [--user U]\n"
	  "             [--save-profile]] [--data-dir DIR] [--chromium PATH] [--headed]\n",
	  "Runs each flow (docs/flows.md) in its own browser session through the same\n"
	  "pipeline as the MCP tools: policy, approvals (a held step fails: a flow does\n"
	  "not wait for a person), verification and signed evidence. Exit status: 0 every\n"
	  "flow passed, 1 a flow failed, 2 bad input (a flow, the vars file, the policy\n"
	  "or an option).\n",
	  "  -j N                run N flows at once (1..32, default 1)\n"
	  "  --junit FILE        write JUnit XML; screenshots go beside it, in FILE's name\n"
	  "                      without .xml + \"-attachments/\"\n"
	  "  --report FILE       write the HTML trail of the run's sessions\n"
	  "  --trace DIR         write each flow's Playwright trace to DIR/NN-name.zip,\n"
	  "                      linked from its JUnit testcase (npx playwright show-trace)\n"
	  "  --vars FILE         NAME=VALUE lines for ${NAME} (before the "
	  "environment)\n" TENANT_POLICY_OPTION(
	      "--config") "  --profile NAME      start every flow from the tenant's saved browser "
	                  "profile\n"
	                  "                      NAME (docs/profiles.md), each on a read-only "
	                  "copy\n"
	                  "  --user U            the profile's user (default \"default\")\n"
	                  "  --save-profile      one flow only: run it on the profile itself and "
	                  "seal its\n"
	                  "                      state as a new version when it ends "
	                  "cleanly\n" DATA_DIR_OPTION CHROMIUM_OPTION
	                  "  --headed            show the browsers' windows\n",
	  "glassbox run flows/*.json -j 4 --config policy.json --junit results/junit.xml \\\n"
	  "    --report results/trail.html\n"
	  "make demo   # the examples of fixtures/flows/ against a local fixture shop\n" },
	{ "profile", "manage a tenant's encrypted browser profiles",
	  "glassbox profile list [--json]\n"
	  "glassbox profile show NAME\n"
	  "glassbox profile create NAME [--ttl SECONDS]\n"
	  "glassbox profile delete NAME\n"
	  "glassbox profile revoke NAME\n"
	  "glassbox profile export NAME [-o FILE] [--origin URL]...\n"
	  "glassbox profile import NAME FILE|-\n",
	  "A profile keeps a browser's cookies, localStorage, IndexedDB and service-worker\n"
	  "storage across sessions, sealed at rest (docs/profiles.md). revoke destroys its\n"
	  "data key: it can never be opened again. export and import move Playwright\n"
	  "storageState JSON (cookies and localStorage); they run Chromium with no\n"
	  "network. A profile of isolation \"context\" is a browser context's storage\n"
	  "state: export and import read and write it without a browser.\n",
	  "  --tenant T          the tenant (default \"local\")\n"
	  "  --user U            the profile's user (default \"default\")\n"
	  "  --ttl SECONDS       create: the profile expires then\n"
	  "  -o FILE             export: a new 0600 file (default stdout)\n"
	  "  --origin URL        export: only this origin's state (repeatable)\n"
	  "  --store CONFIG      the replicas' profiles: the store.postgres and\n"
	  "                      object_store of their serve config (this data dir needs\n"
	  "                      their master key)\n"
	  "  --json              machine-readable output\n" DATA_DIR_OPTION CHROMIUM_OPTION,
	  "glassbox profile create shop-login --ttl 86400\n"
	  "glassbox profile export shop-login -o state.json\n"
	  "glassbox profile export shop-login --store serve.json --tenant acme -o state.json\n" },
	{ "keys", "create or rotate the master key of the sealed stores",
	  "glassbox keys init\n"
	  "glassbox keys rotate\n"
	  "glassbox keys rewrap [--store CONFIG]\n",
	  "init creates the master key (DATA/keys/master.key, 0600) if there is none and\n"
	  "prints its id; $GLASSBOX_MASTER_KEY_FILE names a key kept elsewhere. rotate\n"
	  "replaces it and re-wraps every tenant key with the new one (sealed profiles\n"
	  "are not re-encrypted). Replicas keep the key in a Secret and rotate it there:\n"
	  "$GLASSBOX_MASTER_KEY_OTHER_FILE names a second key that opens what it wrapped\n"
	  "and wraps nothing, and rewrap re-wraps every tenant key of the data dir, and\n"
	  "with --store every one in the replicas' object store, with the current key\n"
	  "(docs/deploy.md, \"Rotating the master key\").\n",
	  "  --store CONFIG      rewrap: the replicas' serve config (its "
	  "object_store)\n" DATA_DIR_OPTION,
	  "glassbox keys init\n"
	  "GLASSBOX_MASTER_KEY_FILE=new.key GLASSBOX_MASTER_KEY_OTHER_FILE=old.key \\\n"
	  "  glassbox keys rewrap --store serve.json\n" },
	{ "secret", "set, list or delete a tenant's secrets (typed by tools, never shown)",
	  "glassbox secret set NAME --hosts H1[,H2...] [--fields K1[,K2...]] [--tenant T]\n"
	  "                    [--from-file FILE]\n"
	  "glassbox secret list [--tenant T] [--json]\n"
	  "glassbox secret delete NAME [--tenant T]\n",
	  "A secret is sealed with the tenant's key; an agent types it with browser_type\n"
	  "{\"secret\": NAME} and never sees it. It is typed only into a field of the kinds\n"
	  "it allows, on a page of its hosts (docs/secrets.md). The value comes from stdin\n"
	  "or --from-file, never from the command line.\n",
	  "  --hosts H1,H2       where it may be typed: patterns as in the egress allowlist\n"
	  "                      (shop.test, *.example.com)\n"
	  "  --fields K1,K2      field kinds (default password,username,email,one-time-code;\n"
	  "                      also text, textarea, any)\n"
	  "  --from-file FILE    read the value from FILE instead of stdin\n"
	  "  --tenant T          the tenant (default \"local\")\n"
	  "  --json              machine-readable output\n" DATA_DIR_OPTION,
	  "printf %s \"$PASSWORD\" | glassbox secret set SHOP_PASSWORD --hosts shop.test\n" },
	{ "files", "put, list or remove the files of a tenant's upload area",
	  "glassbox files put FILE [--name NAME] [--tenant T] [--json]\n"
	  "glassbox files list [--tenant T] [--json]\n"
	  "glassbox files rm NAME [--tenant T]\n",
	  "The upload area holds the only files browser_file_upload and browser_drop give\n"
	  "a page: a tool names a file by its NAME here, never by a path on the host\n"
	  "(docs/tools.md). put stores FILE's bytes as an artifact (sha256, MIME sniffed,\n"
	  "at most 64 MiB) under NAME (default: FILE's base name), replacing a file of\n"
	  "that name; rm removes the name (the artifact stays for the audit trail). Both\n"
	  "are recorded in the tenant's audit log (upload_added, upload_removed).\n",
	  "  --name NAME         the name tools use (1..64 of A-Z a-z 0-9 . _ -)\n"
	  "  --tenant T          the tenant (default \"local\")\n"
	  "  --json              machine-readable output\n" DATA_DIR_OPTION,
	  "glassbox files put invoice-2026-11.pdf --tenant acme\n" },
	{ "tools", "list the browser tools and the pipeline steps each one runs",
	  "glassbox tools [--json | --markdown]\n",
	  "Lists every browser tool with what its descriptor says: its effect (read, page\n"
	  "or lifecycle), the risk rules' action kind it is gated as (or exempt, for\n"
	  "tools that only read), its capability group, and the pipeline steps a call of\n"
	  "it runs (docs/internals/pipeline.md).\n",
	  "  --json              machine-readable output\n"
	  "  --markdown          the table of docs/internals/pipeline.md\n",
	  "glassbox tools\n" },
	{ "policy", "check a policy: the effective one (defaults shown) and its warnings",
	  "glassbox policy check FILE [--json]\n",
	  "Reads FILE, a tenant's policy (the JSON of glassbox mcp --config or run\n"
	  "--config) or a service config of glassbox serve (then each tenant's policy),\n"
	  "and prints the effective policy with every default shown, its hash and its\n"
	  "warnings; or every error in it. Exit status: 0 valid (warnings or not), 2 not\n"
	  "valid or not readable.\n",
	  "  --json              one JSON object: {\"valid\", \"policies\": [{\"source\",\n"
	  "                      \"effective\", \"warnings\"} | {\"source\", \"errors\"}]}\n",
	  "glassbox policy check fixtures/policy/loopback.json\n" },
	{ "version", "print the version", "glassbox version\nglassbox --version\n",
	  "Prints \"glassbox VERSION\".\n", NULL, "glassbox --version\n" },
	{ "help", "print the help of glassbox or of one command",
	  "glassbox help [COMMAND]\nglassbox COMMAND --help\n",
	  "Prints the list of commands, or one command's usage, options and an example\n"
	  "(as -h and --help do).\n",
	  "  --markdown          all of it as Markdown (docs/cli.md is made with it)\n",
	  "glassbox help serve\n" },
};

#define N_HELPS (sizeof(helps) / sizeof(helps[0]))

/* The entry named name, or NULL. */
static const struct cli_help *find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_HELPS; i++)
		if (!strcmp(helps[i].name, name))
			return &helps[i];
	return NULL;
}

/* Prints text with indent before each line. */
static void put_indented(FILE *out, const char *indent, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		fprintf(out, "%s%.*s\n", len ? indent : "", (int)len, p);
		p += len + (nl ? 1 : 0);
	}
}

int cli_help_has(const char *command)
{
	return find(command) != NULL;
}

void cli_help_general(FILE *out)
{
	size_t i;

	fprintf(out, "usage: glassbox COMMAND [options]\n"
	             "       glassbox COMMAND --help   a command's usage, options and an "
	             "example\n\n"
	             "commands:\n");
	for (i = 0; i < N_HELPS; i++)
		fprintf(out, "  %-10s %s\n", helps[i].name, helps[i].summary);
	fprintf(out,
	        "\n"
	        "Start with `glassbox init`, then `glassbox serve` (MCP over HTTP on\n"
	        "127.0.0.1:8931) or `glassbox mcp` (stdio). Logs go to stderr;\n"
	        "GLASSBOX_LOG=debug|info|warn|error sets how much. Every command takes\n"
	        "--data-dir DIR (default $GLASSBOX_DATA_DIR, else ~/.local/share/glassbox).\n"
	        "$GLASSBOX_STORE_POSTGRES (a postgresql:// URL) puts every command's store in\n"
	        "that shared PostgreSQL database (serve's config \"store\" wins), as replica\n"
	        "$GLASSBOX_REPLICA_ID (docs/store.md).\n");
}

int cli_help_command(FILE *out, const char *command)
{
	const struct cli_help *h = find(command);
	size_t first;

	if (!h)
		return -1;
	first = strcspn(h->usage, "\n");
	fprintf(out, "usage: %.*s\n", (int)first, h->usage);
	if (h->usage[first])
		put_indented(out, "       ", h->usage + first + 1);
	fprintf(out, "\n%s", h->about);
	if (h->options)
		fprintf(out, "\noptions:\n%s", h->options);
	if (h->example) {
		fprintf(out, "\nexample:\n");
		put_indented(out, "  ", h->example);
	}
	return 0;
}

void cli_help_markdown(FILE *out)
{
	size_t i;

	fprintf(out, "# glassbox command line\n\n"
	             "<!-- Made by `glassbox help --markdown` (make cli-doc) from cli/help.c; "
	             "a test fails when it differs. Edit cli/help.c, not this file. -->\n\n"
	             "| command | what it does |\n|---|---|\n");
	for (i = 0; i < N_HELPS; i++)
		fprintf(out, "| [`%s`](#glassbox-%s) | %s |\n", helps[i].name, helps[i].name,
		        helps[i].summary);
	fprintf(out,
	        "\nEvery command answers `--help` and `-h` with what follows here.\n"
	        "Environment: `GLASSBOX_DATA_DIR`, `GLASSBOX_CONFIG` (a tenant policy),\n"
	        "`GLASSBOX_CHROMIUM`, `GLASSBOX_TENANT`, `GLASSBOX_MASTER_KEY_FILE`,\n"
	        "`GLASSBOX_LOG=debug|info|warn|error` (logs go to stderr only),\n"
	        "`GLASSBOX_STORE_POSTGRES` (a `postgresql://` URL: every command's store in\n"
	        "that shared database; serve's config `store` wins) and `GLASSBOX_REPLICA_ID`\n"
	        "(the replica's name; else the host's): [store.md](store.md).\n");
	for (i = 0; i < N_HELPS; i++) {
		fprintf(out, "\n## glassbox %s\n\n%s\n```\n", helps[i].name, helps[i].about);
		fputs(helps[i].usage, out);
		fprintf(out, "```\n");
		if (helps[i].options)
			fprintf(out, "\nOptions:\n\n```\n%s```\n", helps[i].options);
		if (helps[i].example)
			fprintf(out, "\nExample:\n\n```sh\n%s```\n", helps[i].example);
	}
}
