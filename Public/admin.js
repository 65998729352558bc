// The operator's dashboard: its numbers and charts every 5 s, read again from
// the server, without reloading the page (a reload would lose the reader's place
// and, for assistive technology, announce a new page).
setInterval(async () => {
  try {
    const r = await fetch(location.pathname, { cache: 'no-store' })
    if (!r.ok) return
    const fresh = new DOMParser().parseFromString(await r.text(), 'text/html').querySelector('main')
    if (!fresh) return
    // What the operator opened stays open.
    document.querySelectorAll('main details[class]').forEach(d => {
      const same = fresh.querySelector('details.' + d.className)
      if (same) same.open = d.open
    })
    document.querySelector('main').replaceWith(fresh)
  } catch (e) {}
}, 5000)
