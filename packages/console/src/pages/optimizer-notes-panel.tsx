/** The Pack Optimizer's notes of a Service on the AI processors page, newest first (0056). */
import { api, ok } from '../api/client';
import { LoadState, Pager, dateTime } from '../components/ui';
import { usePaged } from '../components/use-load';

const PAGE = 5;

export function OptimizerNotesPanel({ service }: { service: number }) {
  const notes = usePaged(
    (page) =>
      ok(
        api.GET('/v1/ai/services/{id}/optimizer_notes/', {
          params: { path: { id: service }, query: page },
        }),
      ),
    { limit: PAGE, deps: [service] },
  );
  return (
    <section class="panel" aria-labelledby="optimizer-notes-title" data-testid="optimizer-notes">
      <h2 id="optimizer-notes-title">Pack Optimizer notes</h2>
      <LoadState loaded={notes} what="the optimizer's notes" />
      {notes.data && notes.data.count === 0 && (
        <p class="muted">No notes yet: the Service's pack optimizer writes one after each run ends.</p>
      )}
      {notes.data?.results.map((note) => (
        <article key={note.id} class="note" data-note={note.id}>
          <h3>
            Service Item {note.service_item}, run {note.run}
          </h3>
          <p class="muted">
            {dateTime(note.created_at)}
            {note.processor_name ? ` · ${note.processor_name}` : ''}
          </p>
          {/* Model output stays text, never markup. */}
          <pre class="json">{note.text}</pre>
        </article>
      ))}
      {notes.data && notes.data.count > 0 && (
        <Pager label="Optimizer notes" keys={notes.keys} count={notes.data.count} next={notes.data.next} />
      )}
    </section>
  );
}
