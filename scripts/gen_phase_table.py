import re, sys
src = open(sys.argv[1] if len(sys.argv) > 1 else 'src/analyze/phase/rules.rs').read()
body = src[src.index('pub static FRAME_RULES'):src.index('];', src.index('pub static FRAME_RULES'))]
body = re.sub(r'//[^\n]*', '', body)
rules = re.findall(r'r\(\s*"([^"]*)",\s*"([^"]*)",\s*(\w),\s*(\w+),\s*"([^"]*)",?\s*\)', body)
P = dict(G='cuda_graph_capture', F='format_conversion', I='inference', K='kv_cache_alloc', P='profiling', S='startup', T='training_step', W='weights_load')
counts = {}
for f, p, ph, role, eng in rules:
    for e in eng.split('/'):
        counts[e] = counts.get(e, 0) + 1
rows = ['| function | path must contain | phase | role | library |', '|---|---|---|---|---|']
for f, p, ph, role, eng in rules:
    fn = f'`{f}`' if f else '`(any)`'
    path = f'`{p}`' if p else '(any)'
    if role == 'Offload':
        rows.append(f'| {fn} | {path} | — (moves below it belong to the forward) | offload hook | {eng} |')
    else:
        rows.append(f'| {fn} | {path} | {P[ph]} | {role.lower()} | {eng} |')
head = f"## Frame rules ({len(rules)} rules; per library, a rule shared by several counted for each: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + ")"
doc = open('docs/phases.md').read()
start = doc.index('## Frame rules (')
table_start = doc.index('| function | path must contain |', start)
table_end = doc.index('\n## ', table_start)
# keep text between heading and table
between = doc[doc.index('\n', start):table_start]
new = doc[:start] + head + between + '\n'.join(rows) + '\n' + doc[table_end:]
open('docs/phases.md', 'w').write(new)
print(len(rules), head[:200])
