"""`topobridge ui`: a local, read-only web view of the topology tree, why gangs wait, and what if.

Layout:
* `model`   pure: objects in, the page's data out (the tree `topobridge tree` builds, sent in
            levels; the largest free room per tier; gangs a page at a time, searched; pending
            gangs with `explain`'s answer), brought up to date change by change;
* `units`   pure: figures as people read them (`26.4Ti/32Ti`, `36,108/80,000`);
* `whatif`  pure: a pasted job, run through `simulate` beside the cluster's objects;
* `server`  the aiohttp server, the sources it reads (a file, or the cluster through the user's
            kubeconfig with watches) and the Server-Sent Events that tell the page to redraw;
* `static/` the page itself (HTML, JS, CSS; no framework, nothing fetched from elsewhere).
"""
