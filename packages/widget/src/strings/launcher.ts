/**
 * The texts the launcher shows before the rest of the widget has loaded (see ../launcher.ts), in every language the
 * widget speaks; each language's full table (en.ts, de.ts, …) starts with these.
 */
export const launcherStrings = {
  en: {
    openChat: 'Open chat',
    closeChat: 'Close chat',
    launcherUnread: '{label} ({count} unread)',
    loadFailed: 'The chat could not load. Check your connection and try again.',
  },
  de: {
    openChat: 'Chat öffnen',
    closeChat: 'Chat schließen',
    launcherUnread: '{label} ({count} ungelesen)',
    loadFailed:
      'Der Chat konnte nicht geladen werden. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  },
  fr: {
    openChat: 'Ouvrir le chat',
    closeChat: 'Fermer le chat',
    launcherUnread: '{label} ({count} non lus)',
    loadFailed: 'Le chat n’a pas pu se charger. Vérifiez votre connexion et réessayez.',
  },
  es: {
    openChat: 'Abrir chat',
    closeChat: 'Cerrar chat',
    launcherUnread: '{label} ({count} sin leer)',
    loadFailed: 'No se ha podido cargar el chat. Comprueba tu conexión e inténtalo de nuevo.',
  },
  pt: {
    openChat: 'Abrir chat',
    closeChat: 'Fechar chat',
    launcherUnread: '{label} ({count} não lidas)',
    loadFailed: 'Não foi possível carregar o chat. Verifique sua conexão e tente novamente.',
  },
  ar: {
    openChat: 'فتح المحادثة',
    closeChat: 'إغلاق المحادثة',
    launcherUnread: '{label} ({count} غير مقروءة)',
    loadFailed: 'تعذّر تحميل المحادثة. تحقّق من اتصالك وحاول مرة أخرى.',
  },
  he: {
    openChat: 'פתיחת הצ׳אט',
    closeChat: 'סגירת הצ׳אט',
    launcherUnread: '{label} ({count} שלא נקראו)',
    loadFailed: 'לא הצלחנו לטעון את הצ׳אט. בדקו את החיבור ונסו שוב.',
  },
};
