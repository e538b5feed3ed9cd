/** Small building blocks every page uses: links, fields with their errors, notices, paging. */
import type { AnchorHTMLAttributes, ComponentChildren, JSX, TargetedInputEvent } from 'preact';
import { useId } from 'preact/hooks';
import type { ApiError } from '../api/problem';
import { followLink } from '../router';
import { asText } from '../text';
import type { PageKeys } from './use-load';

export function Link({ href, children, ...rest }: AnchorHTMLAttributes & { href: string }) {
  return (
    <a href={href} onClick={(event) => followLink(event, href)} {...rest}>
      {children}
    </a>
  );
}

/** An API error in words, announced to screen readers; field errors a form does not show are listed. */
export function ErrorNotice({
  error,
  shownFields = [],
}: {
  error: unknown;
  shownFields?: readonly string[];
}) {
  if (!error) return null;
  const apiError = error as Partial<ApiError>;
  const message = error instanceof Error ? error.message : asText(error);
  const others =
    typeof apiError.otherFieldErrors === 'function' ? apiError.otherFieldErrors(shownFields) : [];
  return (
    <div class="notice notice-error" role="alert">
      <p>{message}</p>
      {others.length > 0 && (
        <ul>
          {others.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Notice({
  children,
  tone = 'info',
}: {
  children: ComponentChildren;
  tone?: 'info' | 'success' | 'warning';
}) {
  return (
    <div class={`notice notice-${tone}`} role="status">
      {children}
    </div>
  );
}

interface FieldProps {
  label: string;
  /** The field's path in API errors (`extra_data.base_url`). */
  name: string;
  error?: unknown;
  hint?: string;
  children: (props: {
    id: string;
    name: string;
    'aria-invalid'?: 'true';
    'aria-describedby'?: string;
  }) => JSX.Element;
}

/** A labelled control with its hint and the API's messages about it right below. */
export function Field({ label, name, error, hint, children }: FieldProps) {
  const id = useId();
  const messages =
    error && typeof (error as ApiError).fieldErrors === 'function'
      ? (error as ApiError).fieldErrors(name)
      : [];
  const described = [hint ? `${id}-hint` : '', messages.length ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div class={`field${messages.length ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({
        id,
        name,
        ...(messages.length ? { 'aria-invalid': 'true' as const } : {}),
        ...(described ? { 'aria-describedby': described } : {}),
      })}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {messages.length > 0 && (
        <p class="field-error" id={`${id}-error`}>
          {messages.join(' ')}
        </p>
      )}
    </div>
  );
}

/** A checkbox with its label after it. */
export function Check({
  label,
  checked,
  onChange,
  name,
  disabled,
}: {
  label: string;
  checked: boolean;
  onChange: (value: boolean) => void;
  name?: string;
  disabled?: boolean;
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        name={name}
        checked={checked}
        disabled={disabled}
        onChange={(event) => onChange(event.currentTarget.checked)}
      />{' '}
      {label}
    </label>
  );
}

/** Previous and Next along a list's `next` links (usePageKeys), with where the page is in the list. */
export function Pager({
  keys,
  count,
  next,
  label,
}: {
  keys: PageKeys;
  count: number;
  next: string | null;
  label: string;
}) {
  if (count <= keys.limit && keys.index === 0)
    return <p class="muted">{count === 1 ? '1 entry' : `${count} entries`}</p>;
  const first = keys.index * keys.limit;
  const last = Math.min(first + keys.limit, count);
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={keys.index === 0} onClick={keys.back}>
        Previous
      </button>
      <span>
        {count === 0 ? 0 : Math.min(first + 1, count)}–{last} of {count}
      </span>
      <button type="button" disabled={next === null} onClick={() => keys.forward(next)}>
        Next
      </button>
    </nav>
  );
}

/** What a load is doing: its error in words, or that it is loading (until the first answer). */
export function LoadState({
  loaded,
  what,
}: {
  loaded: { error: unknown; loading: boolean; data: unknown };
  what: string;
}) {
  return (
    <>
      <ErrorNotice error={loaded.error} />
      {loaded.loading && loaded.data === undefined && <Loading what={what} />}
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** Data as formatted JSON (the standard renderer); model output stays text, never markup. */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {text}
    </pre>
  );
}

export const dateTime = (value: string | null | undefined) =>
  value ? new Date(value).toLocaleString() : '—';

interface TypedInputProps {
  kind: 'text' | 'url' | 'password';
  id: string;
  name: string;
  value: string;
  onInput: (event: TargetedInputEvent<HTMLInputElement>) => void;
  autoComplete?: string;
  required?: boolean;
  disabled?: boolean;
  'aria-invalid'?: 'true';
  'aria-describedby'?: string;
}

/** A one-line text input whose kind is chosen at run time (a secret is a password input). */
export function TypedInput({ kind, ...props }: TypedInputProps) {
  if (kind === 'password') return <input type="password" {...props} />;
  if (kind === 'url') return <input type="url" {...props} />;
  return <input type="text" {...props} />;
}
